package orchestrator

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// The run deadline is a deadline: a presentation that does not end by the
// deadline plus the (configurable) presentation grace is cancelled, and the
// winner's stored answer is the final answer — the Result says so. Before,
// the presentation got a fixed 60 s whatever the settings said.
func TestRunEndsByTheDeadlinePlusThePresentationGrace(t *testing.T) {
	const timeout, grace = 10 * time.Second, 3 * time.Second
	tests := []struct {
		name         string
		b            *fakeModel
		wantDeadline bool // the deadline decided coordination
	}{
		{"consensus before the deadline, presentation hangs", fake("b"), false},
		{"deadline during coordination, presentation hangs", fakeAlways("b", fakeReply{hang: true}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := fake("a", fakeReply{when: "presentation", hang: true})
				start := time.Now()
				res, rec := run(t, fakeTeam(a, tt.b), Options{Settings: coord.Settings{Timeout: timeout, PresentationGrace: grace}})
				took := time.Since(start)
				if res.Status != Completed || res.Winner != "a" || res.Final != "answer from a" {
					t.Fatalf("status=%s winner=%s final=%q (%v), want a's stored answer", res.Status, res.Winner, res.Final, res.Err)
				}
				if !res.GraceExpired || !strings.Contains(res.Fallback, "presentation grace") || res.Deadline != tt.wantDeadline {
					t.Errorf("grace expired=%v deadline=%v fallback=%q: the result does not say what happened", res.GraceExpired, res.Deadline, res.Fallback)
				}
				if took > timeout+grace {
					t.Errorf("the run took %s, past its deadline plus the grace (%s)", took, timeout+grace)
				}
				calls := a.record()
				if last := calls[len(calls)-1]; last.kind != "presentation" || !last.cancelled {
					t.Errorf("a's last call = %+v, want the presentation, cancelled", last)
				}
				fin := rec.of(event.TypeFinalAnswer)
				if len(fin) != 1 || fin[0].Text != "answer from a" || !strings.Contains(fin[0].Reason, "grace") {
					t.Errorf("final_answer events = %+v", fin)
				}
				// The run's last event says so too: the logs and the
				// servers' run views are built from it.
				end := rec.of(event.TypeRunFinished)
				if len(end) != 1 || end[0].Status != "completed" || end[0].Fallback != res.Fallback || !end[0].GraceExpired {
					t.Errorf("run_finished = %+v, want completed with the fallback %q and grace expired", end, res.Fallback)
				}
			})
		})
	}
}

// Turns that fail mid-stream retry after an exponential backoff: a
// provider's trouble of two seconds no longer removes the agent with three
// failures in a fraction of a second.
func TestFailedTurnsRetryAfterABackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fake("a", fakeReply{answer: "answer from a"})
		a.outageErr = &llm.Error{Provider: "fake", Retry: true, Message: "stream cut mid-way"}
		a.outageEnd = time.Now().Add(2 * time.Second)
		res, rec := run(t, fakeTeam(a, fake("b")), Options{})
		if res.Status != Completed {
			t.Fatalf("status = %s (%v)", res.Status, res.Err)
		}
		if failed := rec.of(event.TypeAgentFailed); len(failed) != 0 {
			t.Fatalf("a left the run: %+v", failed)
		}
		if countAgent(rec.of(event.TypeAnswerAccepted), "a") == 0 {
			t.Error("a never answered")
		}
		calls := a.record()
		if len(calls) < 3 {
			t.Fatalf("a made %d calls, want two failures and a success", len(calls))
		}
		for i, min := range []time.Duration{coord.DefaultRetryBackoff, 2 * coord.DefaultRetryBackoff} {
			gap := calls[i+1].at.Sub(calls[i].at)
			if gap < min || gap > min*5/4 {
				t.Errorf("retry %d came after %s, want %s plus at most a quarter of jitter", i+1, gap, min)
			}
		}
		var retries int
		for _, e := range rec.of(event.TypeTurnStarted) {
			if e.Agent == "a" && strings.Contains(e.Reason, "retry after") {
				retries++
			}
		}
		if retries != 2 {
			t.Errorf("%d turn_started events announce a retry, want 2", retries)
		}
	})
}

// A turn that fails because the circuit breaker of its provider model is
// open does not spend the agent's failure budget: nothing was sent, and the
// agent only has to wait.
func TestCircuitOpenFailuresDoNotSpendTheFailureBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fake("a", fakeReply{answer: "answer from a"})
		a.outageErr = fmt.Errorf("fake model fake-a: %w: not calling it for 30s", llm.ErrCircuitOpen)
		a.outageCalls = 5 // more than the budget of 3
		res, rec := runWithin(t, time.Hour, fakeTeam(a, fake("b")), Options{})
		if res.Status != Completed {
			t.Fatalf("status = %s (%v)", res.Status, res.Err)
		}
		if failed := rec.of(event.TypeAgentFailed); len(failed) != 0 {
			t.Fatalf("a left the run after circuit-open failures: %+v", failed)
		}
		if countAgent(rec.of(event.TypeAnswerAccepted), "a") == 0 {
			t.Error("a never answered")
		}
		if n := countAgent(rec.of(event.TypeTurnFailed), "a"); n != 5 {
			t.Errorf("%d turn failures of a reported, want 5", n)
		}
	})
}

// The waits are bounded: a breaker that never closes removes the agent in
// the end (coord.MaxCircuitWaits free waits, then the budget), and the
// others finish without it.
func TestACircuitThatNeverClosesStillRemovesTheAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fakeAlways("a", fakeReply{err: fmt.Errorf("fake: %w", llm.ErrCircuitOpen)})
		res, rec := runWithin(t, 2*time.Hour, fakeTeam(a, fake("b")), Options{Settings: coord.Settings{Timeout: time.Hour}})
		if res.Status != Completed || res.Winner != "b" || res.Deadline {
			t.Fatalf("status=%s winner=%s deadline=%v (%v), want b to finish alone", res.Status, res.Winner, res.Deadline, res.Err)
		}
		failed := rec.of(event.TypeAgentFailed)
		if len(failed) != 1 || failed[0].Agent != "a" {
			t.Fatalf("agent_failed = %+v, want a", failed)
		}
		if n, want := len(a.record()), coord.MaxCircuitWaits+coord.DefaultFailureBudget; n != want {
			t.Errorf("a was called %d times, want %d", n, want)
		}
	})
}
