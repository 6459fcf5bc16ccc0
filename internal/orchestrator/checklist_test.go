package orchestrator

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// Checklist-gated voting on the simulator, through the orchestrator: the
// criteria are in the system prompt, submit_checklist is offered once
// answers exist, its verdict comes back as the tool's result, and a vote
// without an accepted checklist is refused (upstream's gate is advice only).
func TestChecklistGatedVotingOnTheSimulator(t *testing.T) {
	const scores = `{"scores": {"agent1": {"E1": 10, "E2": 9, "E3": 10, "E4": 9}, "agent2": {"E1": 5, "E2": 5, "E3": 5, "E4": 5}}}`
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Paris is the capital of France."
      - calls: [{name: submit_checklist, arguments: '`+scores+`'}]
      - expect_results: [{name: submit_checklist, contains: "Verdict: vote for agent1"}]
        vote: agent1
        reason: "passes every criterion"
  sim-b:
    steps:
      - answer: "It is Paris."
      - vote: agent1
        reason: "no checklist"
      - calls: [{name: submit_checklist, arguments: '`+scores+`'}]
      - vote: agent1
        reason: "the checklist says so"
`, "a", "b")
	res, rec := run(t, agents, Options{Settings: coord.Settings{
		Checklist: &coord.Checklist{Threshold: 2}, Presentation: coord.PresentNever,
	}})
	if res.Status != Completed || res.Winner != "a" {
		t.Fatalf("status = %s winner %q (%v), want a to win", res.Status, res.Winner, res.Err)
	}
	settled(t, srv)
	for _, who := range []string{"sim-a", "sim-b"} {
		reqs := requestsOf(srv, who)
		if !strings.Contains(reqs[0].Messages[0].Content, "E3 [PRIMARY]: Per-part depth") {
			t.Errorf("%s's system prompt lacks the criteria: %s", who, reqs[0].Messages[0].Content)
		}
		for i, r := range reqs {
			offered := strings.Contains(strings.Join(r.Tools, " "), coord.ToolChecklist)
			if offered != (i > 0) {
				t.Errorf("%s request %d: submit_checklist offered = %v (tools %v), want it once answers exist", who, i, offered, r.Tools)
			}
		}
	}
	var refused bool
	for _, e := range rec.of(event.TypeActionRejected) {
		refused = refused || e.Agent == "b" && strings.Contains(e.Reason, "submit_checklist")
	}
	if !refused {
		t.Errorf("b's vote without a checklist was not refused: %+v", rec.of(event.TypeActionRejected))
	}
	var verdicts int
	for _, e := range rec.of(event.TypeToolCalled) {
		if e.Text == coord.ToolChecklist && strings.Contains(e.Result, "Verdict: vote for agent1") {
			verdicts++
		}
	}
	if verdicts != 2 {
		t.Errorf("%d accepted checklists, want 2 (a and b)", verdicts)
	}
}

// An agent's own voting sensitivity reaches its prompt; the others keep
// the team's.
func TestPerAgentSensitivityReachesThePrompt(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentNever,
		PerAgent: &coord.PerAgent{Sensitivity: map[string]coord.VotingSensitivity{"b": coord.VotingStrict}}}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	strict := "Check every aspect and edge case"
	if a := requestsOf(srv, "sim-a"); strings.Contains(a[0].Messages[0].Content, strict) {
		t.Error("a got b's strict prompt")
	}
	if b := requestsOf(srv, "sim-b"); !strings.Contains(b[0].Messages[0].Content, strict) {
		t.Errorf("b's prompt is not strict: %s", b[0].Messages[0].Content)
	}
}
