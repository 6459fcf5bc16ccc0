package orchestrator

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// fairnessRun runs a fast agent a, which answers at once every time it is
// asked, next to b and c, whose first answers are held back until a's second
// answer has been accepted. It returns the order of the run's turn starts and
// accepted answers, as "start a", "answer b", ….
func fairnessRun(t *testing.T, s coord.Settings) (*Result, []string) {
	t.Helper()
	_, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "A first: Paris."
      - answer: "A second: Paris, on the Seine."
      - answer: "A third: Paris, capital since 987."
  sim-b:
    steps:
      - answer: "B first: it is Paris."
  sim-c:
    steps:
      - answer: "C first: Paris, France."
`, "a", "b", "c")
	secondA := make(chan struct{})
	var once sync.Once
	// Agents that answered start again at once (with the default, held
	// first answers, a would wait for b's and c's first answers anyway).
	s.Presentation, s.FirstAnswers = coord.PresentNever, coord.FirstAnswersEager
	o := Options{Settings: s, Trace: func(in coord.Input, cmds []coord.Command) {
		p, ok := in.(coord.Proposed)
		if !ok || p.Agent != "a" || len(cmds) == 0 {
			return
		}
		if r, ok := cmds[0].(coord.Reply); ok && r.Verdict.Outcome == coord.Accepted && r.Verdict.Rev == 2 {
			once.Do(func() { close(secondA) })
		}
	}}
	hold := func(ctx context.Context) error {
		select {
		case <-secondA:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	agents[1].Model = &gatedModel{Model: agents[1].Model, gate: hold}
	agents[2].Model = &gatedModel{Model: agents[2].Model, gate: hold}
	res, rec := run(t, agents, o)
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	<-rec.done
	var order []string
	for _, e := range rec.events {
		switch e.Type {
		case event.TypeTurnStarted:
			order = append(order, "start "+e.Agent)
		case event.TypeAnswerAccepted:
			order = append(order, "answer "+e.Agent)
		}
	}
	return res, order
}

// Fairness is on by default (lead cap 2, as in MassGen v0.1.73): after its
// second answer the fast agent is not started again until b and c, held
// back, have given their first answers; then it goes on. With fairness off
// it starts a third turn at once.
func TestFairnessPausesTheFastAgentUntilTheOthersCatchUp(t *testing.T) {
	res, order := fairnessRun(t, coord.Settings{})
	third := indexNth(order, "start a", 3)
	if third < 0 {
		t.Fatalf("a never started a third turn: %q", order)
	}
	for _, who := range []string{"answer b", "answer c"} {
		if i := slices.Index(order, who); i < 0 || i > third {
			t.Errorf("a's third turn started before %s (paused agents must wait): %q", who, order)
		}
	}
	if got := indexNth(order, "answer a", 3); got < 0 {
		t.Errorf("a never gave its third answer once the others caught up: %q", order)
	}
	if res.Winner == "" {
		t.Errorf("no winner: %+v", res)
	}

	_, order = fairnessRun(t, coord.Settings{FairnessLeadCap: coord.FairnessOff})
	third = indexNth(order, "start a", 3)
	if b := slices.Index(order, "answer b"); third < 0 || third > b {
		t.Errorf("fairness off: a's third turn should start before b's first answer: %q", order)
	}
}

// indexNth is the index of the n-th (from 1) occurrence of s in xs, or -1.
func indexNth(xs []string, s string, n int) int {
	for i, x := range xs {
		if x == s {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}
