package geminicli_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// Past the round's hard time limit the CLI is started again with only the
// workflow tools (cli.Invocation.WorkflowOnly): Gemini CLI then offers its
// model none of its own tools, and the turn ends with an action.
func TestHardRoundLimitLeavesOnlyTheWorkflowTools(t *testing.T) {
	sim, base := simtest.Start(t, "")
	a := newAgent(t, base, "gem-hard-"+unique(t))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	inbox := agent.NewInbox()
	inbox.Post(agent.WrapUp{Hard: true, Message: "HARD ROUND TIMEOUT: only vote or new_answer are allowed now."})
	var done agent.Done
	task := agent.Task{Kind: agent.TaskCoordinate, System: "Answer with new_answer.", User: question, Question: "What is two plus two?"}
	for o := range a.Run(ctx, task, inbox) {
		switch o := o.(type) {
		case agent.Propose:
			inbox.Post(agent.Verdict{Verdict: coord.Verdict{Outcome: coord.Accepted, Label: "agent1"}})
		case agent.Done:
			done = o
		}
	}
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	seen := false
	for _, r := range sim.Requests() {
		if !slices.ContainsFunc(r.Messages, func(m llmsim.Message) bool { return strings.Contains(m.Content, "HARD ROUND TIMEOUT") }) {
			continue
		}
		seen = true
		for _, n := range r.Tools {
			if !strings.HasPrefix(n, "mcp_massgen_") {
				t.Errorf("request %s offers %q, not a workflow tool (all: %v)", r.Step, n, r.Tools)
			}
		}
	}
	if !seen {
		t.Fatalf("no request carried the hard limit's message: %v", steps(sim.Requests()))
	}
}
