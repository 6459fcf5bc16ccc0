package orchestrator

import (
	"context"
	"iter"
	"testing"
	"testing/synctest"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// selfPriced is an agent that says what each of its tasks cost
// (agent.Done.CostUSD), as a coding-agent CLI that prices its own usage.
type selfPriced struct {
	agent.Agent
	cost float64
}

func (p selfPriced) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		for o := range p.Agent.Run(ctx, task, inbox) {
			if d, ok := o.(agent.Done); ok {
				d.CostUSD = p.cost
				o = d
			}
			if !yield(o) {
				return
			}
		}
	}
}

// An agent's reported cost is its cost when its model has no price in
// the catalogue, turn by turn (TurnEnded) and in the result; a catalogue
// price wins over it.
func TestAReportedCostCountsWhenTheModelHasNoPrice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		price   func(llm.Usage) float64
		perTask float64 // the cost each task must count
	}{
		{"no price: the reported cost", nil, 0.25},
		{"a price: the catalogue's", func(u llm.Usage) float64 { return float64(u.Total()) / 1000 }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &scripted{answer: "Paris, the scripted answer.", final: "Paris (final, scripted)."}
				team := append([]Agent{{ID: "script", Backend: "claude_code", Impl: selfPriced{s, 0.25}, Cost: tc.price}}, fakeTeam(fake("b"), fake("c"))...)
				res, rec := run(t, team, Options{})
				if res.Status != Completed {
					t.Fatalf("status %s: %v", res.Status, res.Err)
				}
				s.mu.Lock()
				tasks := len(s.tasks)
				s.mu.Unlock()
				want := tc.perTask * float64(tasks)
				if tc.price != nil {
					want = tc.price(res.Usage["script"])
				}
				if got := res.Cost["script"]; got < want-1e-9 || got > want+1e-9 {
					t.Errorf("cost %v over %d tasks, want %v", got, tasks, want)
				}
				var ended float64
				for _, r := range rec.of(event.TypeTurnEnded) {
					if r.Agent == "script" {
						ended += r.CostUSD
					}
				}
				if tc.price == nil && (ended < 0.25 || ended > want+1e-9) {
					t.Errorf("turn_ended events count $%v of the reported cost; want each coordination turn's $0.25", ended)
				}
			})
		})
	}
}
