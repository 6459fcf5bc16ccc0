package coord

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRecordedRunsReplay replays runs the orchestrator recorded with real
// turns on a model (testdata/runs/*.jsonl, written by the orchestrator's
// TestRecordedRun with -record): a fresh Machine fed the same inputs must
// give the same commands, step by step.
func TestRecordedRunsReplay(t *testing.T) {
	logs, _ := filepath.Glob("testdata/runs/*.jsonl")
	if len(logs) == 0 {
		t.Fatal("no recorded runs in testdata/runs/")
	}
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			l, err := ReadLog(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Steps) < 5 {
				t.Fatalf("only %d steps recorded", len(l.Steps))
			}
			if _, ok := l.Steps[len(l.Steps)-1].Out[len(l.Steps[len(l.Steps)-1].Out)-1].(Finish); !ok {
				t.Fatal("the recorded run does not end with Finish")
			}
			if diff := cmp.Diff(l.Steps, l.Replay(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("replay differs from the recorded run (-recorded +replayed):\n%s", diff)
			}
		})
	}
}
