package orchestrator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// Per-round timeouts act on time, not on tool calls: b's model writes slow
// text and calls no tool (upstream would never warn or stop it). Its first
// round's soft limit passes during that request; its next request carries
// the wrap-up, and after the hard limit only the workflow tools (its own
// tools are gone). b ignores both, and one grace after the hard limit its
// turn ends as a timed-out turn; its fresh round answers.
func TestRoundTimeoutsWarnBlockAndEndATurnThatCallsNoTool(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Paris is the capital of France."
  sim-b:
    steps:
      - text: "Let me think about this at length."
        ttft_ms: 1500
      - text: "Still thinking, no tools needed."
        ttft_ms: 3000
      - answer: "Paris, on the Seine."
`, "a", "b")
	agents[1].Tools = tooltest.Set()
	res, rec := run(t, agents, Options{Settings: coord.Settings{
		FirstRoundTimeout: 300 * time.Millisecond, RoundGrace: time.Second,
		FirstAnswers: coord.FirstAnswersEager, Presentation: coord.PresentNever,
	}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	reqs := requestsOf(srv, "sim-b")
	if len(reqs) < 3 {
		t.Fatalf("b made %d requests, want 3 (slow text, the retry after the warnings, a fresh round)", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if first.Step != "text" || first.Outcome != llmsim.OutcomeCompleted {
		t.Errorf("b's first request: %s %s, want the slow text completed", first.Step, first.Outcome)
	}
	var soft, hard bool
	for _, m := range second.Messages {
		soft = soft || m.Role == "user" && strings.HasPrefix(m.Content, "ROUND TIME LIMIT REACHED")
		hard = hard || m.Role == "user" && strings.HasPrefix(m.Content, "HARD ROUND TIMEOUT")
	}
	if !soft || !hard {
		t.Errorf("b's second request lacks the wrap-up (%v) or the hard block (%v): %+v", soft, hard, second.Messages)
	}
	if slices.ContainsFunc(second.Tools, func(n string) bool { return !coord.IsWorkflowTool(n) }) {
		t.Errorf("tools after the hard limit = %v, want only the workflow tools (first request had %v)", second.Tools, first.Tools)
	}
	if len(first.Tools) <= 2 {
		t.Errorf("b's own tools were not offered before the hard limit: %v", first.Tools)
	}
	if second.Outcome != llmsim.OutcomeCancelled {
		t.Errorf("b's second request: %s, want it cancelled at the cutoff", second.Outcome)
	}
	var cut []event.Record
	for _, e := range rec.of(event.TypeTimeout) {
		if e.Agent == "b" && strings.Contains(e.Err, "round timed out") {
			cut = append(cut, e)
		}
	}
	if len(cut) != 1 {
		t.Errorf("%d round cutoffs for b, want 1: %+v", len(cut), rec.of(event.TypeTimeout))
	}
	if countAgent(rec.of(event.TypeAnswerAccepted), "b") != 1 {
		t.Errorf("b's fresh round did not answer")
	}
}
