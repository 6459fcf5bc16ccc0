package toolless

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/tool"
)

// A scenario with a model that ignores tools (as SmolLM2's chat template
// under llama.cpp does) and one that calls them.
const scenario = `
models:
  blind:
    ignore_tools: true
  blind-text:
    ignore_tools: true
    steps:
      - text: "I think the answer is Paris."
      - text: "ANSWER: Paris is the capital of France."
      - text: "Both look fine.\nVOTE: Agent 2\nREASON: it names the river too"
  refuses-tools:
    steps:
      - fault: "400"
        text: "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"
  sighted: {}
  forgetful:
    steps:
      - fault: no_tool_call
      - vote: agent1
      - fault: no_tool_call
      - fault: no_tool_call
`

func wrapped(t *testing.T, base, model string, mode Mode) *Model {
	t.Helper()
	inner := chatcompat.New(chatcompat.Options{Provider: "chatcompletion", BaseURL: base, APIKey: "none", Model: model, Stream: true})
	m, ok := Wrap(inner, Options{Mode: mode, BaseURL: base, Model: model}).(*Model)
	if !ok {
		t.Fatalf("Wrap(%s) returned the model unwrapped", mode)
	}
	return m
}

// coordination is a coordination request as a turn sends it.
func coordination(model string, labels ...string) *llm.Request {
	tools := []llm.ToolDef{tool.NewAnswer()}
	if len(labels) > 0 {
		tools = append(tools, tool.Vote(labels))
	}
	return &llm.Request{Model: model, Tools: tools, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are agent one of a team."},
		{Role: llm.RoleUser, Content: "<ORIGINAL MESSAGE> What is the capital of France? <END OF ORIGINAL MESSAGE>"},
	}}
}

// send streams req and returns its text and calls.
func send(t *testing.T, m llm.Model, req *llm.Request) (string, []llm.ToolCall) {
	t.Helper()
	var text strings.Builder
	var calls []llm.ToolCall
	done := false
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch c.Kind {
		case llm.ChunkText:
			text.WriteString(c.Text)
		case llm.ChunkToolCall:
			calls = append(calls, *c.ToolCall)
		case llm.ChunkDone:
			done = true
		}
	}
	if !done {
		t.Fatal("the stream ended without a done chunk")
	}
	return text.String(), calls
}

func TestAutoAsksAToolBlindServerThroughTheSchema(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "blind", Auto)

	_, calls := send(t, m, coordination("blind"))
	if m.Mode() != JSONSchema {
		t.Fatalf("auto on a server whose /props says no tool calls: mode %s, want json_schema", m.Mode())
	}
	if len(calls) != 1 || calls[0].Name != coord.ToolNewAnswer || !strings.Contains(calls[0].Arguments, "simulated value") {
		t.Fatalf("first round: calls %+v, want one new_answer holding the schema instance", calls)
	}
	_, calls = send(t, m, coordination("blind", "agent1", "agent2"))
	if len(calls) != 1 || calls[0].Name != coord.ToolVote || !strings.Contains(calls[0].Arguments, `"agent_id":"agent1"`) {
		t.Fatalf("with answers: calls %+v, want a vote for an offered label", calls)
	}
	for _, r := range sim.Requests() {
		if len(r.Tools) != 0 || !r.JSONSchema {
			t.Errorf("request %d: tools %v, json schema %v: want no tools and a response_format schema", r.ID, r.Tools, r.JSONSchema)
		}
		if !strings.Contains(r.Messages[0].Content, `"action": "new_answer"`) {
			t.Errorf("request %d: the system prompt does not say how to reply: %q", r.ID, r.Messages[0].Content)
		}
	}
}

func TestAutoLeavesAToolCallingServerAlone(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "sighted", Auto)
	_, calls := send(t, m, coordination("sighted", "agent1"))
	if m.Mode() != Native {
		t.Fatalf("mode %s, want native", m.Mode())
	}
	if len(calls) != 1 || calls[0].Name != coord.ToolVote || strings.HasPrefix(calls[0].ID, "toolless_") {
		t.Fatalf("calls %+v, want the model's own vote call", calls)
	}
	r := sim.Requests()[0]
	if len(r.Tools) != 2 || r.JSONSchema || r.Messages[0].Content != "You are agent one of a team." {
		t.Errorf("native request changed: tools %v, schema %v, system %q", r.Tools, r.JSONSchema, r.Messages[0].Content)
	}
}

func TestAutoSwitchesWhenTheServerRefusesTools(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "refuses-tools", Auto)
	_, calls := send(t, m, coordination("refuses-tools"))
	if m.Mode() != JSONSchema {
		t.Fatalf("mode %s after a 400 naming tools, want json_schema", m.Mode())
	}
	if len(calls) != 1 || calls[0].Name != coord.ToolNewAnswer {
		t.Fatalf("calls %+v: the refused request was not asked again through the schema", calls)
	}
	rs := sim.Requests()
	if len(rs) != 2 || len(rs[0].Tools) == 0 || len(rs[1].Tools) != 0 || !rs[1].JSONSchema {
		t.Fatalf("want the tools refused, then the same request with a schema; got %d requests", len(rs))
	}
}

// Text mode: a reply without an action is passed on as text (the turn asks
// again), the next ones are read as the action they state, and the
// conversation shows the model its own earlier action as it wrote it and
// the coordinator's verdict as a user message, never a tool message.
func TestTextModeReadsTheLinesAndRewritesTheHistory(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "blind-text", Text)

	text, calls := send(t, m, coordination("blind-text", "agent1"))
	if len(calls) != 0 || text != "I think the answer is Paris." {
		t.Fatalf("a reply without ANSWER:/VOTE: while a vote is open: text %q calls %+v, want the text and no action", text, calls)
	}
	_, calls = send(t, m, coordination("blind-text"))
	if len(calls) != 1 || calls[0].Name != coord.ToolNewAnswer || !strings.Contains(calls[0].Arguments, "Paris is the capital of France.") {
		t.Fatalf("ANSWER: line read as %+v", calls)
	}
	req := coordination("blind-text", "agent1", "agent2")
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: calls[0].ID, Name: coord.ToolNewAnswer, Arguments: calls[0].Arguments}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID, Content: "Error: answer too similar to agent1's", IsError: true},
		llm.Message{Role: llm.RoleUser, Content: coord.EnforcementMessage},
	)
	_, calls = send(t, m, req)
	if len(calls) != 1 || calls[0].Name != coord.ToolVote || !strings.Contains(calls[0].Arguments, `"agent_id":"agent2"`) ||
		!strings.Contains(calls[0].Arguments, "names the river") {
		t.Fatalf("VOTE:/REASON: lines read as %+v", calls)
	}
	last := sim.Requests()[2]
	if len(last.Tools) != 0 || last.JSONSchema {
		t.Errorf("text mode sent tools %v or a schema %v", last.Tools, last.JSONSchema)
	}
	var roles []string
	for _, msg := range last.Messages {
		roles = append(roles, msg.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,user,user" {
		t.Fatalf("roles %s, want system,user,assistant,user,user", got)
	}
	if !strings.HasPrefix(last.Messages[2].Content, "ANSWER: Paris is the capital") {
		t.Errorf("the earlier action reads %q, not as the model wrote it", last.Messages[2].Content)
	}
	if !strings.Contains(last.Messages[4].Content, "VOTE: <agent id, one of: agent1, agent2>") {
		t.Errorf("the enforcement message does not say how to reply in text: %q", last.Messages[4].Content)
	}
}

// Requests without the workflow tools go through; a post-evaluation's
// tools are dropped when the model is asked without tools.
func TestOtherRequestsPassThrough(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "sighted", Text)
	evaluation := func() *llm.Request {
		return &llm.Request{Model: "sighted", Tools: []llm.ToolDef{tool.Submit(), tool.Restart()},
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "Check the final answer."}}}
	}
	send(t, m, &llm.Request{Model: "sighted", Messages: []llm.Message{{Role: llm.RoleUser, Content: "Present your answer."}}})
	send(t, m, evaluation())
	rs := sim.Requests()
	if rs[0].JSONSchema || len(rs[0].Messages) != 1 || rs[0].Messages[0].Content != "Present your answer." {
		t.Errorf("a presentation was rewritten: %+v", rs[0].Messages)
	}
	if len(rs[1].Tools) != 0 || len(rs[1].Messages) != 1 {
		t.Errorf("a post-evaluation in text mode: tools %v, messages %+v; want no tools, the message as it was", rs[1].Tools, rs[1].Messages)
	}
	native := wrapped(t, base, "sighted", Auto)
	send(t, native, coordination("sighted"))
	send(t, native, evaluation())
	if rs := sim.Requests(); len(rs[3].Tools) != 2 {
		t.Errorf("a post-evaluation in native mode lost its tools: %v", rs[3].Tools)
	}
}

// A server without /props that drops tools shows it by answering in
// prose: one prose reply is forgiven (the count restarts at a tool call),
// two in a row switch auto to the schema for the next request.
func TestAutoSwitchesAfterProseInARow(t *testing.T) {
	sim, base := simtest.Start(t, scenario)
	m := wrapped(t, base, "forgetful", Auto)
	for i, want := range []Mode{Native, Native, Native, JSONSchema} {
		text, calls := send(t, m, coordination("forgetful", "agent1"))
		if m.Mode() != want {
			t.Fatalf("after reply %d (text %q, calls %v): mode %s, want %s", i+1, text, calls, m.Mode(), want)
		}
	}
	_, calls := send(t, m, coordination("forgetful", "agent1"))
	rs := sim.Requests()
	if last := rs[len(rs)-1]; len(last.Tools) != 0 || !last.JSONSchema || len(calls) != 1 || calls[0].Name != coord.ToolVote {
		t.Errorf("the request after the switch: tools %v, schema %v, calls %+v; want the schema and a vote", last.Tools, last.JSONSchema, calls)
	}
}
