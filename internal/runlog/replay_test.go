package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/coord"
)

// The replay log is on disk step by step, not at Close: a run that dies
// leaves every step it took, and what is there replays through a fresh
// machine. Steps after Close are not written; Trace works once.
func TestTheReplayLogIsAppendedAsTheMachineSteps(t *testing.T) {
	w := newTestWriter(t, Metadata{Question: "q"})
	cfg := coord.Config{Agents: []string{"a", "b"}, Settings: coord.Settings{}.WithDefaults()}
	trace, err := w.Trace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Trace(cfg); err == nil {
		t.Error("a second Trace opened the log again")
	}
	m := coord.New(cfg)
	step := func(in coord.Input) { trace(in, m.Step(in)) }
	step(coord.Start{})
	step(coord.Proposed{Agent: "a", Turn: 1, Action: coord.Action{Kind: coord.ActNewAnswer, Content: "Paris <b>&</b> nothing else"}})
	step(coord.TurnFailed{Agent: "b", Turn: 2, Err: "stream cut"})

	read := func() *coord.Log {
		t.Helper()
		f, err := os.Open(filepath.Join(w.Dir(), ReplayName))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		l, err := coord.ReadLog(f)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// The process "dies" here: no Close.
	l := read()
	if len(l.Steps) != 3 || !cmp.Equal(l.Config, cfg) {
		t.Fatalf("before Close the log holds %d steps and config %+v, want 3 and %+v", len(l.Steps), l.Config, cfg)
	}
	if diff := cmp.Diff(l.Steps, l.Replay(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the steps on disk do not replay (-recorded +replayed):\n%s", diff)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	step(coord.DeadlinePassed{})
	if n := len(read().Steps); n != 3 {
		t.Errorf("%d steps after Close, want the 3 written before", n)
	}
	if _, err := w.Trace(cfg); !errors.Is(err, ErrClosed) {
		t.Errorf("Trace after Close: %v, want ErrClosed", err)
	}
}
