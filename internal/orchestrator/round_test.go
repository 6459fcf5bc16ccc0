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

// BeforeRound (write_mode's fresh copies) runs once at the start of each
// coordination turn, before that turn's BeforeTurn; never for the final
// presentation, nor for an update injected into a live turn, which must
// keep the work the turn has done so far.
func TestBeforeRoundOncePerCoordinationTurn(t *testing.T) {
	const answerB = "The capital of France is Paris, on the Seine."
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Paris is the capital of France."
      - text: "Let me weigh the answers before I decide."
        ttft_ms: 1000
  sim-b:
    steps:
      - answer: "`+answerB+`"
`, "a", "b")
	agents[1].Model = &gatedModel{Model: agents[1].Model, gate: func(ctx context.Context) error {
		return srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
			n := 0
			for _, r := range rs {
				if r.Model == "sim-a" {
					n++
				}
			}
			return n >= 2
		})
	}}
	var mu sync.Mutex
	var log []string
	for i := range agents {
		id := agents[i].ID
		agents[i].BeforeRound = func() {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, "round "+id)
		}
		agents[i].BeforeTurn = func([]coord.Answer) {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, "view "+id)
		}
	}
	res, rec := run(t, agents, Options{Settings: coord.Settings{RestartPolicy: coord.RestartInject, FirstAnswers: coord.FirstAnswersEager}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	if len(rec.of(event.TypeFinalStarted)) == 0 {
		t.Fatal("no final presentation: the test means nothing without one")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"a", "b"} {
		turns := countAgent(rec.of(event.TypeTurnStarted), id)
		var rounds, views int
		last := ""
		for _, l := range log {
			switch l {
			case "round " + id:
				rounds++
			case "view " + id:
				if last == "round "+id || views > 0 {
					views++
				} else {
					t.Errorf("%s's first view came before its round:\n%s", id, strings.Join(log, "\n"))
				}
			}
			if strings.HasSuffix(l, " "+id) {
				last = l
			}
		}
		if rounds != turns {
			t.Errorf("%s: %d BeforeRound calls for %d coordination turns:\n%s", id, rounds, turns, strings.Join(log, "\n"))
		}
		if id == "a" && views <= rounds {
			// a's second turn got b's answer injected: one more view, no round.
			t.Errorf("a: %d views for %d rounds; the injected update should lay a view and no round:\n%s", views, rounds, strings.Join(log, "\n"))
		}
	}
}
