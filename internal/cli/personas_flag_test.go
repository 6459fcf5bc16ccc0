package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --personas turns persona generation on for a run (its mode), or off
// whatever the config says: the run's display shows the persona call (the
// simulator's reply is no persona JSON, so the fallback personas are
// used and the run says so) only when it is on.
func TestPersonasFlagTurnsGenerationOnAndOff(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "on.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  - {id: a, backend: {type: sim, model: sim-a}}\n  - {id: b, backend: {type: sim, model: sim-b}}\n"+
		"orchestrator:\n  coordination:\n    persona_generator: {enabled: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		on   bool
	}{
		{[]string{"--personas", "methodology", "--config", "@examples/sim_three_agents"}, true},
		{[]string{"--config", cfg}, true},
		{[]string{"--personas", "off", "--config", cfg}, false},
		{[]string{"--config", "@examples/sim_three_agents"}, false},
	} {
		r := massgen(t, t.Context(), nil, nil, append(tc.args, "--no-logs", "What is 2+2?")...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s", tc.args, r.code, r.stderr)
		}
		if got := strings.Contains(r.stderr, "personas"); got != tc.on {
			t.Errorf("%q: persona generation ran = %v, want %v:\n%s", tc.args, got, tc.on, r.stderr)
		}
	}
}
