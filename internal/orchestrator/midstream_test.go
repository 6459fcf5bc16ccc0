package orchestrator

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim"
)

// Mid-stream peer updates are capped per turn (max_midstream_injections_per_round,
// default 2): a's long second turn is sent the first two of the answers b
// and c give meanwhile, and no more; its vote, decided on what it was
// sent, is stale, and a fresh turn shows it the current answers.
func TestMidstreamInjectionsAreCappedPerTurn(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "A: Paris."
      - text: "Weighing every answer carefully before deciding."
        ttft_ms: 2000
      - vote: agent1
        reason: "decided on what I was sent"
  sim-b:
    steps:
      - answer: "B: Paris, France."
      - answer: "B again: Paris, on the Seine."
  sim-c:
    steps:
      - answer: "C: it is Paris."
      - answer: "C again: Paris, capital since 987."
`, "a", "b", "c")
	slowOnWire := func(ctx context.Context) error {
		return srv.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(requestsOf2(rs, "sim-a")) >= 2 })
	}
	agents[1].Model = &gatedModel{Model: agents[1].Model, gate: slowOnWire}
	agents[2].Model = &gatedModel{Model: agents[2].Model, gate: slowOnWire}

	var mu sync.Mutex
	var slowTurn coord.TurnID
	injected, answersDuring := 0, 0
	o := Options{Settings: coord.Settings{RestartPolicy: coord.RestartInject, FirstAnswers: coord.FirstAnswersEager,
		FairnessLeadCap: 9, Presentation: coord.PresentNever},
		Trace: func(in coord.Input, cmds []coord.Command) {
			mu.Lock()
			defer mu.Unlock()
			p, proposed := in.(coord.Proposed)
			for _, c := range cmds {
				switch c := c.(type) {
				case coord.StartTurn:
					if c.Agent == "a" && slowTurn == 0 && c.Epoch > 0 {
						slowTurn = c.Turn
					}
				case coord.Inject:
					if c.Turn == slowTurn {
						injected++
					}
				case coord.Reply:
					if proposed && p.Agent != "a" && p.Action.Kind == coord.ActNewAnswer && c.Verdict.Outcome == coord.Accepted && slowTurn != 0 {
						answersDuring++
					}
					if proposed && p.Turn == slowTurn {
						slowTurn = -1 // the slow turn has decided
					}
				}
			}
		}}
	res, rec := run(t, agents, o)
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if answersDuring < 3 {
		t.Fatalf("only %d answers of b and c during a's slow turn: the scenario did not exercise the cap", answersDuring)
	}
	if injected != coord.DefaultMaxInjections {
		t.Errorf("a's slow turn was sent %d updates for %d new answers, want %d (the cap)", injected, answersDuring, coord.DefaultMaxInjections)
	}
	var stale bool
	for _, e := range rec.of(event.TypeActionRejected) {
		stale = stale || e.Agent == "a" && strings.Contains(e.Reason, "stale")
	}
	if !stale {
		t.Errorf("a's vote on an outdated answer set was not discarded: %+v", rec.of(event.TypeActionRejected))
	}
}

func requestsOf2(rs []llmsim.Record, model string) []llmsim.Record {
	var out []llmsim.Record
	for _, r := range rs {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}
