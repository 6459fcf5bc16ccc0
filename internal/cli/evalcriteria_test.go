package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
)

// --eval-criteria FILE.json gives a checklist-gated run its criteria: the
// run's machine is started with them (coordination_replay.jsonl's first
// line), whatever the config says; a config without checklist-gated
// voting is warned that nothing reads them; a bad file stops the run
// before it starts, naming the file and what is wrong.
func TestEvalCriteriaFlagGivesTheChecklistItsCriteria(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crit := write("criteria.json", `{"criteria": [{"text": "Names the city", "category": "primary"}, {"text": "Says why"}]}`)
	gated := write("gated.yaml", "agents:\n  - {id: a, backend: {type: sim, model: sim-a}}\n  - {id: b, backend: {type: sim, model: sim-b}}\n"+
		"orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n    checklist_criteria_inline: [{text: From the config}]\n")
	logs := filepath.Join(dir, "logs")
	r := massgen(t, t.Context(), nil, nil, "--eval-criteria", crit, "--config", gated, "--log-dir", logs, "What is the capital of France?")
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
	var first coord.Config // the replay log's first line
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &first); err != nil {
		t.Fatalf("replay log's first line: %v", err)
	}
	ck := first.Checklist
	if ck == nil || len(ck.Criteria) != 2 || ck.Criteria[0] != (coord.Criterion{Text: "Names the city", Category: coord.CatPrimary}) || ck.Criteria[1].Text != "Says why" {
		t.Errorf("the machine's checklist: %+v", ck)
	}

	r = massgen(t, t.Context(), nil, nil, "--eval-criteria", crit, "--config", "@examples/sim_three_agents", "--no-logs", "q")
	if r.code != 0 || !strings.Contains(r.stderr, "checklist-gated voting, which this config does not turn on") {
		t.Errorf("an ungated config: exit %d, stderr %q", r.code, r.stderr)
	}
	bad := write("bad.json", `[{"category": "primary"}]`)
	r = massgen(t, t.Context(), nil, nil, "--eval-criteria", bad, "--config", gated, "--no-logs", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "--eval-criteria "+bad+`: criterion 1 has no "text"`) {
		t.Errorf("a bad file: exit %d, stderr %q", r.code, r.stderr)
	}
}
