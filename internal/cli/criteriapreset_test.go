package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/massgen/massgen/internal/coord"
)

// --checklist-criteria-preset NAME gives a checklist-gated run upstream's
// criteria set of that name (the machine starts with them: the replay
// log's first line); an unknown name is a usage error listing the names.
func TestChecklistCriteriaPresetFlag(t *testing.T) {
	dir := t.TempDir()
	gated := filepath.Join(dir, "gated.yaml")
	if err := os.WriteFile(gated, []byte("agents:\n  - {id: a, backend: {type: sim, model: sim-a}}\n  - {id: b, backend: {type: sim, model: sim-b}}\n"+
		"orchestrator:\n  voting_sensitivity: checklist_gated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs")
	r := massgen(t, t.Context(), nil, nil, "--checklist-criteria-preset", "analysis", "--config", gated, "--log-dir", logs, "Why is the sky blue?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	replays, _ := filepath.Glob(filepath.Join(logs, "log_*", "coordination_replay.jsonl"))
	if len(replays) != 1 {
		t.Fatalf("%d replay logs", len(replays))
	}
	data, err := os.ReadFile(replays[0])
	if err != nil {
		t.Fatal(err)
	}
	var first coord.Config
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &first); err != nil {
		t.Fatal(err)
	}
	want, _ := coord.PresetCriteria("analysis")
	if first.Checklist == nil || !cmp.Equal(want, first.Checklist.Criteria) {
		t.Errorf("the machine's criteria: %+v", first.Checklist)
	}
	r = massgen(t, t.Context(), nil, nil, "--checklist-criteria-preset", "analyses", "--config", gated, "--no-logs", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "no such preset") || !strings.Contains(r.stderr, "analysis") {
		t.Errorf("an unknown preset: exit %d, stderr %q", r.code, r.stderr)
	}
}
