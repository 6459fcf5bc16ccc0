package config

import (
	"strings"
	"testing"
)

// write_mode, drift_conflict_policy, enable_changedoc and
// fast_iteration_mode are read, not warned about; enable_changedoc is on
// unless turned off; invalid enum values are errors with a suggestion.
func TestIsolationKeys(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  coordination:
    write_mode: worktree
    drift_conflict_policy: prefer_presenter
    fast_iteration_mode: true
`, nil)
	want := Isolation{WriteMode: "worktree", DriftPolicy: "prefer_presenter", FastIteration: true}
	if cfg.Orchestrator.Isolation != want || !cfg.Orchestrator.Isolation.Isolates() || len(cfg.Warnings) != 0 || len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("got %+v, warnings %s, ignored %q", cfg.Orchestrator.Isolation, dump(cfg.Warnings), cfg.IgnoredFeatures())
	}
	cfg = parseOK(t, oneAgent+"orchestrator:\n  coordination: {write_mode: legacy, enable_changedoc: false}\n", nil)
	if iso := cfg.Orchestrator.Isolation; iso.Isolates() || !iso.NoChangedoc || len(cfg.Warnings) != 0 {
		t.Errorf("legacy: %+v%s", iso, dump(cfg.Warnings))
	}
	if iso := parseOK(t, oneAgent, nil).Orchestrator.Isolation; iso != (Isolation{}) {
		t.Errorf("defaults: %+v", iso)
	}
	for _, tc := range []struct{ src, key, sugg string }{
		{"orchestrator:\n  coordination:\n    write_mode: autp\n", "orchestrator.coordination.write_mode", "did you mean 'auto'?"},
		{"orchestrator:\n  coordination:\n    drift_conflict_policy: prefer\n", "orchestrator.coordination.drift_conflict_policy", "prefer_presenter"},
		{"orchestrator:\n  coordination:\n    enable_changedoc: maybe\n", "orchestrator.coordination.enable_changedoc", ""},
	} {
		ds := diagnose(t, oneAgent+tc.src, nil)
		d, ok := find(ds, tc.key, Error)
		if !ok || d.Line == 0 || !strings.Contains(d.Suggestion+d.Message, tc.sugg) {
			t.Errorf("%s: error %s (found %v), want one with %q", tc.key, d, ok, tc.sugg)
		}
	}
}
