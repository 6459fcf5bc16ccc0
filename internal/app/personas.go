package app

import (
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
)

// personas is the run's persona generator: the config's
// (coordination.persona_generator), unless flag (--personas) turns it off
// ("off") or on with a diversity mode; nil when it is off.
func personas(g *config.PersonaGenerator, flag string) *orchestrator.Personas {
	switch {
	case flag == "off":
		return nil
	case flag != "" && g == nil:
		return &orchestrator.Personas{Mode: flag, After: orchestrator.PersonaDrop}
	case flag != "":
		return &orchestrator.Personas{Mode: flag, After: g.AfterFirstAnswer, Guidelines: g.Guidelines}
	case g == nil:
		return nil
	}
	return &orchestrator.Personas{Mode: g.DiversityMode, After: g.AfterFirstAnswer, Guidelines: g.Guidelines}
}
