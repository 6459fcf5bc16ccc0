package app

import (
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
)

// personas is the run's persona generator from the config's
// (coordination.persona_generator), or nil when it is off.
func personas(g *config.PersonaGenerator) *orchestrator.Personas {
	if g == nil {
		return nil
	}
	return &orchestrator.Personas{Mode: g.DiversityMode, After: g.AfterFirstAnswer, Guidelines: g.Guidelines}
}
