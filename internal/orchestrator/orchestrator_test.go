package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// simTeam starts a simulator with the given scenario (YAML) and returns one
// agent per id, each on the model "sim-<id>".
func simTeam(t *testing.T, scenario string, ids ...string) (*llmsim.Server, []Agent) {
	t.Helper()
	srv, url := simtest.Start(t, scenario)
	return srv, simAgents(url, ids)
}

// simAgents returns one agent per id on the simulator at url, each on the
// model "sim-<id>".
func simAgents(url string, ids []string) []Agent {
	var agents []Agent
	for _, id := range ids {
		model := "sim-" + id
		agents = append(agents, Agent{ID: id, Backend: "sim", ModelName: model, Simulated: true,
			Model: chatcompat.New(chatcompat.Options{Provider: "sim", BaseURL: url, APIKey: "sim", Model: model, Stream: true})})
	}
	return agents
}

// recorder keeps every event of a run.
type recorder struct {
	mu     sync.Mutex
	events []event.Record
	done   chan struct{}
}

func record(b *event.Broker) *recorder {
	r := &recorder{done: make(chan struct{})}
	sub := b.Subscribe()
	go func() {
		defer close(r.done)
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			r.mu.Lock()
			r.events = append(r.events, event.ToRecord(e))
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *recorder) of(typ event.Type) []event.Record {
	<-r.done
	var out []event.Record
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func run(t *testing.T, agents []Agent, o Options) (*Result, *recorder) {
	t.Helper()
	return runWithin(t, 30*time.Second, agents, o)
}

// runWithin is run with a limit other than 30 s: under synctest, time is
// virtual, and a run that backs off for minutes takes no real time.
func runWithin(t *testing.T, limit time.Duration, agents []Agent, o Options) (*Result, *recorder) {
	t.Helper()
	o.Agents = agents
	o.Events = event.NewBroker()
	rec := record(o.Events)
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	res := Run(ctx, "What is the capital of France?", o)
	o.Events.Close()
	<-rec.done
	return res, rec
}

func TestThreeAgentsReachConsensusAndPresent(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b", "c")
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v), want completed", res.Status, res.Err)
	}
	// The default simulator policy votes for agent1, the first agent in config order.
	if res.Winner != "a" || res.How != "plurality" {
		t.Errorf("winner = %s (%s), want a by plurality", res.Winner, res.How)
	}
	if !strings.Contains(res.Final, "Final answer") || res.Fallback != "" {
		t.Errorf("final = %q (fallback %q), want the presentation text", res.Final, res.Fallback)
	}
	if got := len(rec.of(event.TypeAnswerAccepted)); got != 3 {
		t.Errorf("%d answers accepted, want 3 (one independent first answer each)", got)
	}
	votes := rec.of(event.TypeVoteAccepted)
	lastAnswer := rec.of(event.TypeAnswerAccepted)[2].Seq
	counted := 0
	for _, v := range votes {
		if v.Seq > lastAnswer {
			counted++
		}
	}
	if counted != 3 || res.Tally["a"] != 3 {
		t.Errorf("final-epoch votes = %d, tally = %v; want 3 votes for a", counted, res.Tally)
	}
	if u := res.TotalUsage(); u.InputTokens == 0 || u.OutputTokens == 0 {
		t.Errorf("usage not recorded: %+v", u)
	}
	settled(t, srv)
	for _, r := range srv.Requests() {
		if r.Outcome == "fault" {
			t.Errorf("unexpected fault: %+v", r)
		}
	}
}

func TestNewAnswerCancelsTheInFlightTurnOfAnotherAgent(t *testing.T) {
	// a answers at once, then its next turn hangs. b answers 300 ms later:
	// that answer must cancel a's hanging request (restart policy) and start
	// a fresh turn that sees both answers. Eager: by default a would wait
	// for b's first answer instead of starting a turn that is doomed.
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Paris is the capital of France."
      - fault: hang
  sim-b:
    steps:
      - answer: "The capital of France is Paris, on the Seine."
        ttft_ms: 300
`, "a", "b")
	res, rec := run(t, agents, Options{Settings: coord.Settings{FirstAnswers: coord.FirstAnswersEager}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	var cancelled []llmsim.Record
	for _, r := range srv.Requests() {
		if r.Outcome == "cancelled" && r.Model == "sim-a" && r.Step == "fault:hang" {
			cancelled = append(cancelled, r)
		}
	}
	if len(cancelled) != 1 {
		t.Fatalf("want a's hanging request cancelled once, got %d; requests: %+v", len(cancelled), srv.Requests())
	}
	restarts := rec.of(event.TypeTurnRestarted)
	if len(restarts) == 0 || restarts[0].Agent != "a" || restarts[0].Target != "b" {
		t.Fatalf("want a restart of a caused by b, got %+v", restarts)
	}
	// The cancellation reached the simulator promptly. The bound is loose on
	// purpose (slow CI machines); the benchmark measures the real figure.
	var answerB time.Time
	for _, e := range rec.of(event.TypeAnswerAccepted) {
		if e.Agent == "b" {
			answerB = e.Time
		}
	}
	if lag := cancelled[0].End.Sub(answerB); lag > 2*time.Second {
		t.Errorf("cancellation reached the simulator %s after the answer", lag)
	}
}

func TestAgentsWaitForPendingFirstAnswersInsteadOfStartingDoomedTurns(t *testing.T) {
	// b's first answer takes 300 ms. a answers at once and then waits (no
	// request) until b's answer is in, so nothing is cancelled at all.
	srv, agents := simTeam(t, `
models:
  sim-b:
    steps:
      - answer: "The capital of France is Paris, on the Seine."
        ttft_ms: 300
`, "a", "b")
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	if n := len(rec.of(event.TypeTurnRestarted)); n != 0 {
		t.Errorf("%d turns were restarted, want none", n)
	}
	settled(t, srv)
	for _, r := range srv.Requests() {
		if r.Outcome != "completed" {
			t.Errorf("request %d (%s) ended %s", r.ID, r.Model, r.Outcome)
		}
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d requests, want 5: two answers, two votes, one presentation", n)
	}
}

// An agent whose turns keep failing with an error that may be temporary
// (a 503) spends its failure budget, then leaves. (An error retrying cannot
// fix, a 401, ends it at once: TestAPermanentProviderErrorEndsTheAgentAtOnce.)
func TestPermanentlyFailingAgentDoesNotBlockConsensus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeAlways("c", fakeReply{err: &llm.Error{Provider: "fake", Status: 503, Retry: true, Message: "overloaded"}})
		res, rec := run(t, fakeTeam(fake("a"), fake("b"), c), Options{})
		if res.Status != Completed {
			t.Fatalf("status = %s (%v), want completed without c", res.Status, res.Err)
		}
		failed := rec.of(event.TypeAgentFailed)
		if len(failed) != 1 || failed[0].Agent != "c" || !strings.Contains(failed[0].Err, "503") {
			t.Fatalf("want c failed with its 503, got %+v", failed)
		}
		if res.Tally["c"] != 0 || res.Winner == "c" {
			t.Errorf("failed agent counted: %+v", res)
		}
		if n := len(c.record()); n != coord.DefaultFailureBudget {
			t.Errorf("c was called %d times, want %d (its failure budget)", n, coord.DefaultFailureBudget)
		}
	})
}

func TestAllAgentsFailingEndsTheRunWithTheirErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fakeAlways("a", fakeReply{err: &llm.Error{Provider: "fake", Status: 401, Message: "bad key"}})
		b := fakeAlways("b", fakeReply{err: &llm.Error{Provider: "fake", Status: 500, Message: "boom"}})
		res, _ := run(t, fakeTeam(a, b), Options{Settings: coord.Settings{FailureBudget: 2}})
		if res.Status != Failed {
			t.Fatalf("status = %s, want failed", res.Status)
		}
		for _, want := range []string{"a:", "401", "b:", "500"} {
			if !strings.Contains(res.Err.Error(), want) {
				t.Errorf("error %q does not mention %q", res.Err, want)
			}
		}
	})
}

func TestTimeoutWithAnswersPresentsTheBestAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res, rec := run(t, fakeTeam(fake("a"), fakeAlways("b", fakeReply{hang: true})), Options{Settings: coord.Settings{Timeout: 700 * time.Millisecond}})
		if res.Status != Completed || !res.Deadline {
			t.Fatalf("status = %s deadline=%v (%v), want completed at the deadline", res.Status, res.Deadline, res.Err)
		}
		if res.Winner != "a" || !strings.HasPrefix(res.How, "timeout") {
			t.Errorf("winner = %s (%s), want a chosen at timeout", res.Winner, res.How)
		}
		if len(rec.of(event.TypeTimeout)) == 0 {
			t.Error("no timeout event")
		}
		if d := time.Since(start); d != 700*time.Millisecond {
			t.Errorf("the run took %s, want it to end at its deadline (the presentation takes no time)", d)
		}
	})
}

func TestTimeoutWithoutAnswersIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fakeAlways("a", fakeReply{hang: true}), fakeAlways("b", fakeReply{hang: true})
		res, _ := run(t, fakeTeam(a, b), Options{Settings: coord.Settings{Timeout: 300 * time.Millisecond}})
		if res.Status != TimedOut {
			t.Fatalf("status = %s, want timeout", res.Status)
		}
		for _, m := range []*fakeModel{a, b} {
			if calls := m.record(); len(calls) != 1 || !calls[0].cancelled {
				t.Errorf("%s's calls = %+v, want its one call cancelled", m.id, calls)
			}
		}
	})
}

// settled waits until the simulator has recorded the end of every request:
// it records an outcome a moment after the client has read the response.
func settled(t *testing.T, srv *llmsim.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
		for _, r := range rs {
			if r.End.IsZero() {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("requests still open: %+v", srv.Requests())
	}
}

// waitAllCancelled waits until the simulator has seen every request end by
// cancellation (the server notices a closed connection a moment after the
// client gives up).
func waitAllCancelled(t *testing.T, srv *llmsim.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
		for _, r := range rs {
			if r.Outcome != "cancelled" {
				return false
			}
		}
		return len(rs) > 0
	})
	if err != nil {
		t.Fatalf("not every request was cancelled: %+v", srv.Requests())
	}
}

func TestInvalidActionsGetCorrectiveMessagesAndRetry(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - fault: no_tool_call
      - fault: malformed_tool_json
      - answer: "Paris."
`, "a")
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	rej := rec.of(event.TypeActionRejected)
	if len(rej) != 2 || !strings.Contains(rej[0].Reason, "did not call a workflow tool") || !strings.Contains(rej[1].Reason, "not valid JSON") {
		t.Fatalf("rejections = %+v", rej)
	}
	// The corrective message reached the model: as a user message after
	// plain text, as a tool result after a bad tool call.
	reqs := srv.Requests()
	second, third := reqs[1].Messages, reqs[2].Messages
	if last := second[len(second)-1]; last.Role != "user" || !strings.Contains(last.Content, "did not call") {
		t.Errorf("second request ends with %+v", last)
	}
	if last := third[len(third)-1]; last.Role != "tool" || !strings.Contains(last.Content, "not valid JSON") {
		t.Errorf("third request ends with %+v", last)
	}
}

func TestFailedPresentationFallsBackToTheStoredAnswer(t *testing.T) {
	_, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - fault: "500"
        when: presentation
`, "a")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentAlways}})
	if res.Status != Completed || res.Fallback == "" || !strings.Contains(res.Final, "[sim model sim-a]") {
		t.Fatalf("want the stored answer as fallback, got status=%s fallback=%q final=%q", res.Status, res.Fallback, res.Final)
	}
}

func TestPostEvaluationRestartRunsASecondAttemptWithFeedback(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "first attempt answer"
      - vote: agent1
      - text: "first final"
      - restart: "it misses the population"
        reason: "mention the population"
`, "a")
	res, rec := run(t, agents, Options{Settings: coord.Settings{MaxRestarts: 1, Presentation: coord.PresentAlways}})
	if res.Status != Completed || res.Attempts != 2 {
		t.Fatalf("status=%s attempts=%d, want completed in 2 attempts", res.Status, res.Attempts)
	}
	if len(rec.of(event.TypeRunRestarted)) != 1 {
		t.Error("no orchestration restart event")
	}
	sawFeedback := false
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "PREVIOUS ATTEMPT FEEDBACK") && strings.Contains(m.Content, "mention the population") {
				sawFeedback = true
			}
		}
	}
	if !sawFeedback {
		t.Error("second attempt did not show the feedback block")
	}
}

func TestCancellingTheContextInterruptsEveryRequest(t *testing.T) {
	srv, agents := simTeam(t, `
defaults:
  always: {fault: hang}
models: {}
`, "a", "b", "c")
	b := event.NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_ = srv.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) == 3 })
		cancel()
	}()
	res := Run(ctx, "q", Options{Agents: agents, Events: b})
	b.Close()
	if res.Status != Interrupted {
		t.Fatalf("status = %s, want interrupted", res.Status)
	}
	// In words, not the Go error of a cancelled context (issue 22).
	if res.Err == nil || res.Err.Error() != "interrupted" || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("err = %v, want \"interrupted\" (still a context.Canceled)", res.Err)
	}
	waitAllCancelled(t, srv)
}

func TestInterruptDuringPresentationKeepsTheStoredAnswer(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Paris."
      - vote: agent1
      - fault: hang
        when: presentation
`, "a")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_ = srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
			return len(rs) == 3 && rs[2].Step == "fault:hang"
		})
		cancel()
	}()
	res := Run(ctx, "q", Options{Agents: agents, Settings: coord.Settings{Presentation: coord.PresentAlways}})
	if res.Status != Interrupted || res.Final != "Paris." || res.Winner != "a" {
		t.Fatalf("status=%s final=%q winner=%q, want interrupted with the stored answer kept", res.Status, res.Final, res.Winner)
	}
}
