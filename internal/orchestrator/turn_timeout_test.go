package orchestrator

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

func TestHangingAgentTimesOutPerTurnAndLeavesAfterItsFailureBudget(t *testing.T) {
	tests := []struct {
		name     string
		budget   int
		settings coord.Settings
	}{
		{"failure budget 2", 2, coord.Settings{TurnTimeout: 200 * time.Millisecond, FailureBudget: 2}},
		{"default failure budget of 3, eager", 3, coord.Settings{TurnTimeout: 200 * time.Millisecond, FirstAnswers: coord.FirstAnswersEager}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := fakeAlways("c", fakeReply{hang: true})
				res, rec := run(t, fakeTeam(fake("a"), fake("b"), c), Options{Settings: tt.settings})
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

				// Every call of c hung and was abandoned at its turn timeout,
				// the retries after a backoff.
				calls := c.record()
				if len(calls) != tt.budget {
					t.Errorf("c got %d calls, want %d (one per timed-out turn)", len(calls), tt.budget)
				}
				for i, call := range calls {
					if !call.cancelled {
						t.Errorf("c's call %d was not cancelled", i+1)
					}
					if i > 0 && call.at.Sub(calls[i-1].at) < 200*time.Millisecond+coord.DefaultRetryBackoff {
						t.Errorf("c's call %d came %s after the previous one, want the turn timeout plus a backoff", i+1, call.at.Sub(calls[i-1].at))
					}
				}
				if got := countAgent(rec.of(event.TypeAnswerAccepted), "a") + countAgent(rec.of(event.TypeAnswerAccepted), "b"); got < 2 {
					t.Errorf("%d answers from a and b, want both to answer", got)
				}
			})
		})
	}
}
