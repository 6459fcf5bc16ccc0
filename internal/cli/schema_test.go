package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
)

// The old and the new forms of a run's events are the same events: the
// lines --stream-events (schema 1) printed and the records the same run
// logged (coordination_events.jsonl, the one schema) match one for one,
// in order, with the same agents, texts, labels and targets; deltas and
// progress aside, which the log does not keep, and the stream's own
// finished line.
func TestStreamV1AndTheLoggedRecordsAreTheSameEvents(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--stream-events", "--config", "@examples/sim_three_agents", "What is the capital of France?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	renamed := map[string]event.Type{}
	for typ, name := range streamTypes {
		renamed[name] = typ
	}
	var v1 []map[string]any
	for _, l := range streamLines(t, r.stdout) {
		typ, ok := renamed[l["type"].(string)]
		if !ok || typ.Droppable() {
			continue // finished, deltas, progress
		}
		l["type"] = string(typ)
		v1 = append(v1, l)
	}
	f, err := os.Open(filepath.Join(r.logDir(t), "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var v2 []event.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec event.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.V != event.SchemaVersion {
			t.Errorf("record %d has schema version %d, want %d", rec.Seq, rec.V, event.SchemaVersion)
		}
		// The stream says run_finished with its finished line; model_called
		// is schema 2's only (tracing detail added after schema 1).
		if rec.Type != event.TypeRunFinished && rec.Type != event.TypeModelCalled {
			v2 = append(v2, rec)
		}
	}
	if len(v1) != len(v2) || len(v2) < 15 {
		t.Fatalf("%d stream lines, %d records: want the same events (and a whole run)", len(v1), len(v2))
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	for i, rec := range v2 {
		l := v1[i]
		if str(l, "type") != string(rec.Type) || str(l, "agent") != rec.Agent && rec.Type != event.TypeWinnerSelected {
			t.Fatalf("event %d: stream %v, record %+v", i, l, rec)
		}
		switch rec.Type {
		case event.TypeAnswerAccepted:
			if str(l, "text") != rec.Text || str(l, "label") != rec.Label || str(l, "anon_label") != rec.AnonLabel {
				t.Errorf("answer %d differs: %v vs %+v", i, l, rec)
			}
		case event.TypeVoteAccepted:
			if str(l, "target") != rec.Target || str(l, "target_label") != rec.TargetLabel || str(l, "reason") != rec.Reason {
				t.Errorf("vote %d differs: %v vs %+v", i, l, rec)
			}
		case event.TypeWinnerSelected:
			if str(l, "winner") != rec.Agent || str(l, "how") != rec.Reason || str(l, "label") != rec.Label {
				t.Errorf("winner differs: %v vs %+v", l, rec)
			}
		case event.TypeFinalAnswer:
			if str(l, "text") != rec.Text || str(l, "reason") != rec.Reason {
				t.Errorf("final answer differs")
			}
		}
	}
}

// With --event-schema 2, --stream-events prints the records themselves,
// every event of the run in the one schema, and ends with a finished
// record carrying the result.
func TestStreamEventsInTheOneSchema(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--stream-events", "--event-schema", "2", "--config", "@examples/sim_three_agents", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var recs []event.Record
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec event.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.V != event.SchemaVersion {
			t.Fatalf("line %q is not a v%d record (%v)", line, event.SchemaVersion, err)
		}
		recs = append(recs, rec)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Seq <= recs[i-1].Seq {
			t.Fatalf("seq %d after %d", recs[i].Seq, recs[i-1].Seq)
		}
	}
	fin := recs[len(recs)-1]
	if fin.Type != event.TypeFinished || fin.Status != "completed" || fin.ExitCode == nil || *fin.ExitCode != 0 ||
		fin.Text == "" || fin.Agent == "" || len(fin.Usage) != 3 || fin.LogDir == "" {
		t.Errorf("finished record %+v", fin)
	}
	if recs[len(recs)-2].Type != event.TypeRunFinished {
		t.Errorf("the run's own run_finished does not come before the finished line: %s", recs[len(recs)-2].Type)
	}
	bad := massgen(t, t.Context(), nil, nil, "--stream-events", "--event-schema", "3", "--config", "@examples/sim_three_agents", "q")
	if bad.code != ExitConfig || !strings.Contains(bad.stderr, "--event-schema 3") {
		t.Errorf("--event-schema 3: exit %d, %s", bad.code, bad.stderr)
	}
}
