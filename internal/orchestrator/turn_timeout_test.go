package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim"
)

func TestHangingAgentTimesOutPerTurnAndLeavesAfterItsFailureBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		opts   Options
	}{
		{"failure budget 2", 2, Options{TurnTimeout: 200 * time.Millisecond, FailureBudget: 2}},
		{"default failure budget of 3, eager", 3, Options{TurnTimeout: 200 * time.Millisecond, Eager: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, agents := simTeam(t, `
models:
  sim-c:
    always: {fault: hang}
`, "a", "b", "c")
			res, rec := run(t, agents, tt.opts)
			if res.Status != Completed {
				t.Fatalf("status = %s (%v), want the others to complete without c", res.Status, res.Err)
			}
			if res.Winner == "c" || res.Tally["c"] != 0 {
				t.Errorf("winner = %s tally = %v: the hanging agent took part", res.Winner, res.Tally)
			}
			if res.Deadline {
				t.Error("the run deadline decided, want consensus of a and b")
			}

			var timeouts []event.Record
			for _, e := range rec.of(event.TypeTimeout) {
				if e.Agent == "" {
					t.Errorf("run-level timeout event: %+v", e)
					continue
				}
				if e.Agent != "c" {
					t.Errorf("turn timeout for %s, which does not hang: %+v", e.Agent, e)
					continue
				}
				if !strings.Contains(e.Err, "timed out") {
					t.Errorf("timeout event error = %q, want it to say the turn timed out", e.Err)
				}
				timeouts = append(timeouts, e)
			}
			if len(timeouts) != tt.budget {
				t.Errorf("%d turn timeouts for c, want %d (its failure budget)", len(timeouts), tt.budget)
			}
			for _, e := range rec.of(event.TypeTurnFailed) {
				if e.Agent == "c" {
					t.Errorf("c's timeout reported as a plain turn failure: %+v", e)
				}
			}

			failed := rec.of(event.TypeAgentFailed)
			if len(failed) != 1 || failed[0].Agent != "c" {
				t.Fatalf("agent_failed events = %+v, want exactly one for c", failed)
			}
			if len(timeouts) > 0 && failed[0].Seq < timeouts[len(timeouts)-1].Seq {
				t.Errorf("c left the run (seq %d) before its last timeout (seq %d)", failed[0].Seq, timeouts[len(timeouts)-1].Seq)
			}
			if !strings.Contains(failed[0].Err, "timed out") {
				t.Errorf("agent_failed error = %q, want the timeout", failed[0].Err)
			}
			for _, e := range rec.of(event.TypeTurnStarted) {
				if e.Agent == "c" && e.Seq > failed[0].Seq {
					t.Errorf("c started a turn after it left the run: %+v", e)
				}
			}

			// Every request of c hung and was abandoned at its turn timeout.
			reqsC := requestsOf(srv, "sim-c")
			if len(reqsC) != tt.budget {
				t.Errorf("sim-c got %d requests, want %d (one per timed-out turn)", len(reqsC), tt.budget)
			}
			waitCancelled(t, srv, "sim-c")

			if got := countAgent(rec.of(event.TypeAnswerAccepted), "a") + countAgent(rec.of(event.TypeAnswerAccepted), "b"); got < 2 {
				t.Errorf("%d answers from a and b, want both to answer", got)
			}
		})
	}
}

// waitCancelled waits until every request to model has ended by
// cancellation (the server notices a dropped connection a moment after the
// client gives up).
func waitCancelled(t *testing.T, srv *llmsim.Server, model string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
		n := 0
		for _, r := range rs {
			if r.Model != model {
				continue
			}
			n++
			if r.Outcome != llmsim.OutcomeCancelled {
				return false
			}
		}
		return n > 0
	})
	if err != nil {
		t.Errorf("not every %s request ended cancelled: %+v", model, requestsOf(srv, model))
	}
}
