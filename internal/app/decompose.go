package app

import (
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/orchestrator"
)

// withDecomposition applies decomposition mode (coordination_mode:
// decomposition, or --coordination-mode, which wins: mode is
// "decomposition", "voting" or "" for the config's) to settings and
// returns the subtasks the orchestrator assigns before the run (nil in
// voting mode).
func withDecomposition(cfg *config.Config, mode string, settings *coord.Settings) *orchestrator.Subtasks {
	switch mode {
	case "decomposition":
		settings.Decomposition = true
	case "voting":
		settings.Decomposition = false
	}
	if !settings.Decomposition {
		return nil
	}
	d := cfg.Orchestrator.Decomposition
	s := &orchestrator.Subtasks{Given: map[string]string{}, Decompose: !d.NoDecomposer, Guidelines: d.Guidelines,
		Criteria: len(cfg.Orchestrator.ChecklistCriteria) == 0}
	for _, a := range cfg.Agents {
		if a.Subtask != "" {
			s.Given[a.ID] = a.Subtask
		}
	}
	return s
}
