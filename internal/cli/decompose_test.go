package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// --coordination-mode decomposition runs the team in decomposition mode
// (each agent shares its part, then stops; the last agent presents), and
// --coordination-mode parallel runs a decomposition config by votes: the
// flag wins over the config's coordination_mode, as upstream.
func TestCoordinationModeFlag(t *testing.T) {
	logDir := regexp.MustCompile(`(?m)^LOG_DIR: (.+)$`)
	r := massgen(t, t.Context(), map[string]string{"c.yaml": twoSimAgents}, nil,
		"--automation", "--coordination-mode", "decomposition", "--config", "c.yaml", "Build a calculator")
	if r.code != 0 || !strings.Contains(r.stdout, "RESULT: completed") || !strings.Contains(r.stdout, "WINNER: second") {
		t.Fatalf("decomposition: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m := logDir.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no LOG_DIR in\n%s", r.stdout)
	}
	journal, err := os.ReadFile(filepath.Join(strings.TrimSpace(m[1]), "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if j := string(journal); !strings.Contains(j, "stop (complete): simulated stop") || !strings.Contains(j, "YOUR ASSIGNED SUBTASK: Own part 2 of 2") ||
		strings.Contains(j, "simulated vote") {
		t.Errorf("the decomposition run's events:\n%.2000s", j)
	}

	decomposed := twoSimAgents + "orchestrator:\n  coordination_mode: decomposition\n"
	r = massgen(t, t.Context(), map[string]string{"c.yaml": decomposed}, nil,
		"--automation", "--coordination-mode", "parallel", "--config", "c.yaml", "q")
	if r.code != 0 || !strings.Contains(r.stdout, "WINNER: first") {
		t.Fatalf("parallel over a decomposition config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m = logDir.FindStringSubmatch(r.stdout)
	if journal, err = os.ReadFile(filepath.Join(strings.TrimSpace(m[1]), "coordination_events.jsonl")); err != nil {
		t.Fatal(err)
	}
	if j := string(journal); strings.Contains(j, "stop (") || !strings.Contains(j, "simulated vote") {
		t.Errorf("the parallel run's events:\n%.2000s", j)
	}
}
