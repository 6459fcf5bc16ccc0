package orchestrator

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
)

// gatedModel holds its first request back until gate returns, so a test
// can order events across agents without sleeping.
type gatedModel struct {
	llm.Model
	gate  func(ctx context.Context) error
	calls int // only touched by the one turn goroutine of its agent at a time
}

func (g *gatedModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	g.calls++
	if g.calls > 1 {
		return g.Model.Stream(ctx, req)
	}
	return func(yield func(llm.Chunk, error) bool) {
		if err := g.gate(ctx); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		for c, err := range g.Model.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
		}
	}
}

func requestsOf(srv *llmsim.Server, model string) []llmsim.Record {
	var out []llmsim.Record
	for _, r := range srv.Requests() {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

func TestInjectPolicyUpdatesAnInFlightTurnInsteadOfCancellingIt(t *testing.T) {
	// a answers at once; its second turn (not a first answer, so it may be
	// interrupted) is slow: 1 s before it streams plain text without a
	// workflow call. b's first answer is held back until a's second request
	// is on the wire, then arrives at once: during a's slow step. With
	// restart_policy inject, a's request must run to its end, and its next
	// request (the enforcement retry of the same turn) must carry an UPDATE
	// message with both answers.
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

	res, rec := run(t, agents, Options{Settings: coord.Settings{RestartPolicy: coord.RestartInject, FirstAnswers: coord.FirstAnswersEager}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}

	settled(t, srv)
	reqsA := requestsOf(srv, "sim-a")
	if len(reqsA) < 3 {
		t.Fatalf("sim-a got %d requests, want at least 3 (answer, slow step, retry): %+v", len(reqsA), reqsA)
	}
	slow, next := reqsA[1], reqsA[2]
	if slow.Step != "text" || slow.Outcome != llmsim.OutcomeCompleted {
		t.Fatalf("a's slow request: step %q outcome %q, want the text step completed (not cancelled)", slow.Step, slow.Outcome)
	}
	// The scenario relies on b's answer landing while a's slow request was
	// in flight; check that it did, so a pass means what it says.
	var bAnswered event.Record
	for _, e := range rec.of(event.TypeAnswerAccepted) {
		if e.Agent == "b" {
			bAnswered = e
		}
	}
	if bAnswered.Seq == 0 {
		t.Fatal("b's answer was never accepted")
	}
	if bAnswered.Time.Before(slow.Start) || bAnswered.Time.After(slow.End) {
		t.Fatalf("b's answer at %v is not inside a's slow request [%v, %v]: scenario timing broken",
			bAnswered.Time, slow.Start, slow.End)
	}

	for _, r := range reqsA {
		if r.Outcome == llmsim.OutcomeCancelled {
			t.Errorf("a's request %d (%s) was cancelled under the inject policy", r.ID, r.Step)
		}
	}
	for _, e := range rec.of(event.TypeTurnRestarted) {
		if e.Agent == "a" {
			t.Errorf("a's turn was restarted under the inject policy: %+v", e)
		}
	}
	// The slow turn continued: a had exactly two coordination turns (its
	// first answer, then the one that got the update).
	if n := countAgent(rec.of(event.TypeTurnStarted), "a"); n != 2 {
		t.Errorf("a started %d turns, want 2 (the in-flight turn continues rather than starting over)", n)
	}

	// a's next request carries the update, with the whole new answer set.
	var update string
	for _, m := range next.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "UPDATE:") {
			update = m.Content
		}
	}
	if update == "" {
		t.Fatalf("a's request after the slow step has no UPDATE message: %+v", next.Messages)
	}
	for _, w := range []string{"<agent1> Paris is the capital of France. <end of agent1>", "<agent2> " + answerB + " <end of agent2>"} {
		if !strings.Contains(update, w) {
			t.Errorf("update message lacks %q:\n%s", w, update)
		}
	}
	if !slices.Equal(next.VoteEnum, []string{"agent1", "agent2"}) {
		t.Errorf("vote enum after the update = %v, want [agent1 agent2]", next.VoteEnum)
	}
	for _, m := range slow.Messages {
		if strings.HasPrefix(m.Content, "UPDATE:") {
			t.Errorf("a's slow request already had an update: the scenario did not test what it means to")
		}
	}
	// a decided on the updated set, so its vote counts (it is not discarded as stale).
	if n := countAgent(rec.of(event.TypeVoteAccepted), "a"); n != 1 {
		t.Errorf("a cast %d accepted votes, want 1", n)
	}
	for _, e := range rec.of(event.TypeActionRejected) {
		if e.Agent == "a" && strings.Contains(e.Reason, "stale") {
			t.Errorf("a's vote was treated as stale: %+v", e)
		}
	}
}

func countAgent(events []event.Record, agent string) int {
	n := 0
	for _, e := range events {
		if e.Agent == agent {
			n++
		}
	}
	return n
}
