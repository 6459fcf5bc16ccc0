package llmsim

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// A scenario scripts a kit tool (task planning, subagents) by its bare
// name; a coding-agent CLI offers it under its MCP prefix, and the
// simulator calls it by that name, checks its result under the bare name,
// and calls it by the bare name where a request offers it so.
func TestKitToolsUnderAClientsPrefix(t *testing.T) {
	f := start(t, scenario(t, `models:
  cli-kit:
    steps:
      - calls:
          - {name: create_task_plan, arguments: '{"tasks":[]}'}
          - {name: spawn_subagents, arguments: '{"tasks":[]}'}
      - answer: planned
        expect_results:
          - {name: create_task_plan, contains: "plan made"}
  api-kit:
    steps:
      - calls:
          - {name: create_task_plan, arguments: '{"tasks":[]}'}
`))
	ctx := testCtx(t)
	tools := []anthropic.ToolUnionParam{antTool("Bash", nil), antTool("mcp__massgen_tools__create_task_plan", nil),
		antTool("mcp_massgen_tools_spawn_subagents", nil), antTool("mcp__massgen__new_answer", newAnswerSchema())}
	r := runAnthropic(ctx, f, antParams("cli-kit", taskMessage, tools...))
	calls := antCalls(&r.msg)
	if r.err != nil || len(calls) != 2 || calls[0][0] != "mcp__massgen_tools__create_task_plan" || calls[1][0] != "mcp_massgen_tools_spawn_subagents" {
		t.Fatalf("calls %v, %v", calls, r.err)
	}

	// Its result is checked under the bare name the scenario gives.
	p := antParams("cli-kit", taskMessage, tools...)
	p.Messages = append(p.Messages, r.msg.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(r.msg.Content[0].ID, "plan made: 0 tasks", false),
		anthropic.NewToolResultBlock(r.msg.Content[1].ID, "spawned", false)))
	r = runAnthropic(ctx, f, p)
	if calls := antCalls(&r.msg); r.err != nil || len(calls) != 1 || calls[0][0] != "mcp__massgen__new_answer" {
		t.Fatalf("after the results: calls %v, %v", calls, r.err)
	}
	if rec := lastRecord(t, f); rec.Outcome == OutcomeRejected {
		t.Errorf("the expected result was not recognised: %+v", rec)
	}

	// A wrong result fails the expectation.
	f2 := start(t, scenario(t, "models:\n  cli-kit:\n    steps:\n      - calls:\n          - {name: create_task_plan}\n"+
		"      - answer: planned\n        expect_results:\n          - {name: create_task_plan, contains: \"plan made\"}\n"))
	r = runAnthropic(ctx, f2, antParams("cli-kit", taskMessage, tools...))
	p = antParams("cli-kit", taskMessage, tools...)
	p.Messages = append(p.Messages, r.msg.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(r.msg.Content[0].ID, "no such thing", true)))
	runAnthropic(ctx, f2, p)
	if rec := lastRecord(t, f2); rec.Outcome != OutcomeRejected {
		t.Errorf("a result without the text passed: %+v", rec)
	}

	// Offered under its own name (an API agent), it is called by it.
	r = runAnthropic(ctx, f, antParams("api-kit", taskMessage, antTool("create_task_plan", nil), antTool("new_answer", newAnswerSchema())))
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][0] != "create_task_plan" {
		t.Errorf("API agent: calls %v", calls)
	}
}
