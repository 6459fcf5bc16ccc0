package orchestrator

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

func TestSpentBudgetStopsCoordinationAndPresentsTheBestAnswerSoFar(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := fake("b", fakeReply{answer: "slow answer from b", delay: 5 * time.Second})
		res, rec := run(t, fakeTeam(fake("a"), b), Options{Settings: coord.Settings{MaxTokens: 1}})
		if res.Status != Completed || res.Winner != "a" || !strings.HasPrefix(res.How, "budget") {
			t.Fatalf("status=%s winner=%s how=%q (%v), want a's answer presented after the budget stop", res.Status, res.Winner, res.How, res.Err)
		}
		stops := rec.of(event.TypeBudgetExceeded)
		if len(stops) != 1 || !strings.Contains(stops[0].Reason, "max_total_tokens") {
			t.Fatalf("budget events = %+v", stops)
		}
		// b's turn is cancelled by the stop: before its request went out
		// (the goroutine had not run yet) or while it was in flight. Either
		// way its slow answer never completes.
		if calls := b.record(); len(calls) > 1 || len(calls) == 1 && !calls[0].cancelled {
			t.Errorf("b's calls = %+v, want its slow first answer cancelled (or never sent)", calls)
		}
	})
}

func TestCostIsPricedPerAgentAndCarriedByEvents(t *testing.T) {
	_, agents := simTeam(t, "", "a", "b")
	for i := range agents {
		agents[i].Cost = func(u llm.Usage) float64 { return float64(u.Total()) / 1e6 } // $1 per million tokens
	}
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	total := res.TotalUsage().Total()
	if got, want := res.TotalCost(), float64(total)/1e6; got < want*0.999 || got > want*1.001 || got == 0 {
		t.Errorf("total cost = %v, want %v for %d tokens", got, want, total)
	}
	var evCost float64
	for _, e := range rec.events {
		if e.Type != event.TypeModelCalled { // each request again: its turn_ended has it
			evCost += e.CostUSD
		}
	}
	if evCost < res.TotalCost()*0.999 || evCost > res.TotalCost()*1.001 {
		t.Errorf("events carry $%v, result says $%v", evCost, res.TotalCost())
	}
}
