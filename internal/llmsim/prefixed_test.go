package llmsim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// A coding-agent CLI offers the workflow tools of massgen's MCP server
// under its own prefix, beside its built-in tools, and asks its model once
// more after the coordinator accepted its action. The simulator answers
// and votes under the prefixed names, ends the turn with text then, and
// keeps its scripted steps for the turns that count.
func TestWorkflowToolsUnderAClientsPrefix(t *testing.T) {
	f := start(t, scenario(t, "models:\n  cli-sim:\n    steps:\n      - answer: scripted first\n      - answer: scripted second\n"))
	ctx := testCtx(t)
	native := []anthropic.ToolUnionParam{antTool("Bash", nil), antTool("Read", nil)}
	answer := antTool("mcp__massgen__new_answer", newAnswerSchema())

	r := runAnthropic(ctx, f, antParams("cli-sim", taskMessage, append(native, answer)...))
	if calls := antCalls(&r.msg); r.err != nil || len(calls) != 1 || calls[0][0] != "mcp__massgen__new_answer" ||
		calls[0][1] != `{"content":"scripted first"}` {
		t.Fatalf("first turn: calls %v, %v", calls, r.err)
	}
	if rec := lastRecord(t, f); rec.Step != "answer" {
		t.Errorf("record %+v", rec)
	}

	// The CLI sends the accepted action's result back: text, no step used.
	p := antParams("cli-sim", taskMessage, append(native, answer)...)
	id := r.msg.Content[len(r.msg.Content)-1].ID
	p.Messages = append(p.Messages, r.msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "Answer recorded as agent1.", false)))
	r = runAnthropic(ctx, f, p)
	if r.err != nil || len(antCalls(&r.msg)) != 0 || !strings.HasPrefix(antText(&r.msg), "Done") {
		t.Fatalf("after the action: text %q calls %v, %v", antText(&r.msg), antCalls(&r.msg), r.err)
	}

	// Its next turn gets the next scripted step; a vote goes by the
	// Gemini CLI's prefix.
	r = runAnthropic(ctx, f, antParams("cli-sim", taskMessage, append(native, answer)...))
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][1] != `{"content":"scripted second"}` {
		t.Fatalf("second turn: calls %v", calls)
	}
	r = runAnthropic(ctx, f, antParams("other-sim", "task", append(native,
		antTool("mcp_massgen_new_answer", newAnswerSchema()), antTool("mcp_massgen_vote", voteSchema("agent2", "agent1")))...))
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][0] != "mcp_massgen_vote" ||
		calls[0][1] != `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}` {
		t.Errorf("vote: calls %v", calls)
	}

	// A rejection is not the end: the model corrects it.
	p = antParams("other-sim", "task", append(native, antTool("mcp_massgen_new_answer", newAnswerSchema()))...)
	p.Messages = append(p.Messages, r.msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(r.msg.Content[len(r.msg.Content)-1].ID, "agent9 is not one of the answers", true)))
	r = runAnthropic(ctx, f, p)
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][0] != "mcp_massgen_new_answer" {
		t.Errorf("after a rejection: calls %v", calls)
	}

	// Built-in tools and no workflow tool: a presentation's text.
	r = runAnthropic(ctx, f, antParams("cli-sim", taskMessage, native...))
	if len(antCalls(&r.msg)) != 0 || !strings.Contains(antText(&r.msg), "Final answer") {
		t.Errorf("presentation: %q", antText(&r.msg))
	}
}

// A checklist-gated agent offered submit_checklist scores every answer on
// every criterion its prompt lists, once a turn, before it votes.
func TestDefaultPolicyScoresTheChecklistBeforeVoting(t *testing.T) {
	f := start(t, scenario(t, "models: {}\n"))
	ctx := testCtx(t)
	tools := []anthropic.ToolUnionParam{antTool("mcp__massgen__new_answer", newAnswerSchema()),
		antTool("mcp__massgen__vote", voteSchema("agent2", "agent1")), antTool("mcp__massgen__submit_checklist", nil)}
	p := antParams("gated", taskMessage, tools...)
	p.System = []anthropic.TextBlockParam{{Text: "Criteria:\nE1 [PRIMARY]: correct ___/10\nE2: complete ___/10\n"}}
	r := runAnthropic(ctx, f, p)
	calls := antCalls(&r.msg)
	if r.err != nil || len(calls) != 1 || calls[0][0] != "mcp__massgen__submit_checklist" {
		t.Fatalf("calls %v, %v", calls, r.err)
	}
	var args struct {
		Scores map[string]map[string]struct{ Score int }
	}
	if err := json.Unmarshal([]byte(calls[0][1]), &args); err != nil || len(args.Scores) != 2 ||
		len(args.Scores["agent2"]) != 2 || args.Scores["agent1"]["E2"].Score != 9 {
		t.Fatalf("scores %s: %v", calls[0][1], err)
	}
	p.Messages = append(p.Messages, r.msg.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(r.msg.Content[len(r.msg.Content)-1].ID, "Verdict: vote for agent2.", false)))
	r = runAnthropic(ctx, f, p)
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][0] != "mcp__massgen__vote" {
		t.Errorf("after scoring: calls %v", calls)
	}
}
