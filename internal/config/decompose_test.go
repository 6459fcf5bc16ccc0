package config

import (
	"slices"
	"strings"
	"testing"
)

const decompositionTeam = `agents:
  - id: a
    subtask: "the parser"
    backend: {type: sim, model: sim}
  - id: b
    backend: {type: sim, model: sim}
orchestrator:
  coordination_mode: decomposition
  presenter_agent: b
  coordination:
    task_decomposer:
      enabled: false
      decomposition_guidelines: "split by layer"
      timeout_seconds: 120
`

// Decomposition mode's keys load without a warning and reach the rules
// (coord.Settings) and the team (Agent.Subtask, Decomposition).
func TestDecompositionKeysAreImplemented(t *testing.T) {
	cfg := parseOK(t, decompositionTeam, nil)
	if len(cfg.Warnings) != 0 {
		t.Fatalf("warnings:%s", dump(cfg.Warnings))
	}
	for _, f := range cfg.IgnoredFeatures() {
		if strings.Contains(f, "decomposition") || strings.Contains(f, "subtask") || strings.Contains(f, "presenter") {
			t.Errorf("ignored feature %q", f)
		}
	}
	s, err := cfg.Settings()
	if err != nil || !s.Decomposition || s.Presenter != "b" {
		t.Fatalf("settings %+v, %v", s, err)
	}
	d := cfg.Orchestrator.Decomposition
	if cfg.Agents[0].Subtask != "the parser" || cfg.Agents[1].Subtask != "" || !d.NoDecomposer || d.Guidelines != "split by layer" {
		t.Errorf("subtasks %q %q, decomposition %+v", cfg.Agents[0].Subtask, cfg.Agents[1].Subtask, d)
	}
	// The decomposer is on by default.
	on := parseOK(t, strings.Replace(decompositionTeam, "enabled: false", "enabled: true", 1), nil)
	if on.Orchestrator.Decomposition.NoDecomposer {
		t.Error("task_decomposer.enabled: true reads as off")
	}
	if def := parseOK(t, oneAgent+"orchestrator:\n  coordination_mode: decomposition\n", nil); def.Orchestrator.Decomposition.NoDecomposer || !def.Orchestrator.Decomposition.On {
		t.Errorf("defaults: %+v", def.Orchestrator.Decomposition)
	}
}

// What decomposition mode would not use is said: a presenter that is not
// an agent, a subtask in voting mode; a mode upstream does not know is an
// error with the valid values.
func TestDecompositionMistakes(t *testing.T) {
	cfg := parseOK(t, strings.Replace(decompositionTeam, "presenter_agent: b", "presenter_agent: zed", 1), nil)
	if w, ok := find(cfg.Warnings, "orchestrator.presenter_agent", Warning); !ok || !strings.Contains(w.Message, "the last agent presents") {
		t.Errorf("unknown presenter:%s", dump(cfg.Warnings))
	}
	voting := parseOK(t, strings.Replace(decompositionTeam, "coordination_mode: decomposition", "coordination_mode: voting", 1), nil)
	if w, ok := find(voting.Warnings, "agents[0].subtask", Warning); !ok || !strings.Contains(w.Message, "only with orchestrator.coordination_mode: decomposition") {
		t.Errorf("subtask in voting mode:%s", dump(voting.Warnings))
	}
	ds := diagnose(t, oneAgent+"orchestrator:\n  coordination_mode: decompose\n", nil)
	if !slices.ContainsFunc(ds.Errors(), func(d Diagnostic) bool {
		return d.Key == "orchestrator.coordination_mode" && strings.Contains(d.Suggestion, "decomposition")
	}) {
		t.Errorf("a wrong mode:%s", dump(ds))
	}
}
