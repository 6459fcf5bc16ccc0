package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicClient is the official SDK pointed at the simulator, with nothing
// read from ANTHROPIC_* variables or profiles and no retries.
func anthropicClient(f *fixture) anthropic.Client {
	return anthropic.NewClient(aoption.WithoutEnvironmentDefaults(),
		aoption.WithBaseURL(strings.TrimSuffix(f.base, "/v1")), aoption.WithAPIKey("sim"),
		aoption.WithMaxRetries(0), aoption.WithHTTPClient(f.hc))
}

func antParams(model, user string, tools ...anthropic.ToolUnionParam) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: "You are a test."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(user))},
		Tools:     tools,
	}
}

func antTool(name string, schema map[string]any) anthropic.ToolUnionParam {
	s := anthropic.ToolInputSchemaParam{}
	if schema != nil {
		s.Properties, s.Required = schema["properties"], nil
		if req, ok := schema["required"].([]string); ok {
			s.Required = req
		}
	}
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: name, InputSchema: s}}
}

// antStream is a Messages stream accumulated with Message.Accumulate.
type antStream struct {
	msg     anthropic.Message
	types   []string
	partial map[int64]string // input_json_delta fragments joined, by block index
	err     error
}

func runAnthropic(ctx context.Context, f *fixture, p anthropic.MessageNewParams) *antStream {
	c := anthropicClient(f)
	st := c.Messages.NewStreaming(ctx, p)
	defer st.Close()
	r := &antStream{partial: map[int64]string{}}
	for st.Next() {
		ev := st.Current()
		r.types = append(r.types, ev.Type)
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			r.partial[ev.Index] += ev.Delta.PartialJSON
		}
		if err := r.msg.Accumulate(ev); err != nil {
			r.err = err
			return r
		}
	}
	r.err = st.Err()
	return r
}

func antCalls(m *anthropic.Message) [][2]string {
	var out [][2]string
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			out = append(out, [2]string{b.Name, string(b.Input)})
		}
	}
	return out
}

func antText(m *anthropic.Message) string {
	var s strings.Builder
	for _, b := range m.Content {
		if b.Type == "text" {
			s.WriteString(b.Text)
		}
	}
	return s.String()
}

func TestAnthropicStreamingText(t *testing.T) {
	f := start(t, scenario(t, `models: {claude-sim: {final: "The final answer is forty-two, as computed by the simulator."}}`))
	r := runAnthropic(testCtx(t), f, antParams("claude-sim", "What is six times seven?"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	const want = "The final answer is forty-two, as computed by the simulator."
	if got := antText(&r.msg); got != want || r.msg.StopReason != anthropic.StopReasonEndTurn || r.msg.ID != "msg_sim000001" {
		t.Errorf("text %q, message %+v", got, r.msg)
	}
	if r.types[0] != "message_start" || r.types[1] != "content_block_start" || r.types[len(r.types)-2] != "message_delta" ||
		r.types[len(r.types)-1] != "message_stop" {
		t.Errorf("events %v", r.types)
	}
	rec := lastRecord(t, f)
	u := r.msg.Usage
	if rec.Wire != WireAnthropic || rec.Step != "text" || rec.Outcome != OutcomeCompleted || !rec.Stream ||
		int(u.OutputTokens) != rec.OutputTokens || rec.OutputTokens != countTokens(want) || int(u.InputTokens) != rec.PromptTokens {
		t.Errorf("record %+v, usage %+v", rec, u)
	}
	if len(rec.Messages) != 2 || rec.Messages[0].Role != "system" || rec.Messages[1].Content != "What is six times seven?" {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	f := start(t, nil)
	c := anthropicClient(f)
	ctx := testCtx(t)
	m, err := c.Messages.New(ctx, antParams("plain", "Say hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := antText(m); !strings.HasPrefix(got, "[sim model plain] Final answer to: Say hello. ") ||
		int(m.Usage.OutputTokens) != countTokens(got) || m.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("message %+v", m)
	}
	// A tool call, with a tool loop in the conversation.
	p := antParams("claude-sim", taskMessage, antTool("new_answer", newAnswerSchema()))
	p.Messages = append(p.Messages,
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("Reading."), anthropic.NewToolUseBlock("toolu_1", map[string]any{"path": "x"}, "read_file")),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "file text", false)))
	m, err = c.Messages.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	calls := antCalls(m)
	if len(calls) != 1 || calls[0][0] != "new_answer" || !strings.Contains(calls[0][1], "Answer 1 to: What is the capital of France?") ||
		m.StopReason != anthropic.StopReasonToolUse || m.Content[0].ID != "toolu_sim000002_0" {
		t.Errorf("message %+v", m)
	}
	rec := lastRecord(t, f)
	if len(rec.Messages) != 4 || rec.Messages[2].Role != "assistant" || rec.Messages[2].Content != "Reading." ||
		rec.Messages[2].ToolCalls[0] != "read_file" || rec.Messages[3].Role != "tool" || rec.Messages[3].ToolCallID != "toolu_1" ||
		rec.Messages[3].Content != "file text" || rec.Messages[1].Content != taskMessage {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestAnthropicToolCalls(t *testing.T) {
	f := start(t, scenario(t, strings.ReplaceAll(severalCalls, "  m:", "  claude-sim:")))
	ctx := testCtx(t)
	tools := []anthropic.ToolUnionParam{antTool("new_answer", newAnswerSchema()), antTool("vote", voteSchema("agent1"))}
	r := runAnthropic(ctx, f, antParams("claude-sim", "task", tools...))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := antCalls(&r.msg); len(got) != 3 || got[0] != wantSeveral[0] || got[1] != wantSeveral[1] || got[2] != wantSeveral[2] {
		t.Errorf("calls %v", got)
	}
	if antText(&r.msg) != "Doing both." || r.msg.StopReason != anthropic.StopReasonToolUse || r.msg.Content[1].ID != "toolu_sim000001_0" {
		t.Errorf("message %+v", r.msg)
	}
	// Default policy: new_answer, then a vote for the first label.
	r = runAnthropic(ctx, f, antParams("claude-sim", taskMessage, tools[0]))
	calls := antCalls(&r.msg)
	var args struct{ Content string }
	if r.err != nil || len(calls) != 1 || json.Unmarshal([]byte(calls[0][1]), &args) != nil ||
		!strings.HasPrefix(args.Content, "[sim model claude-sim] Answer 1 to: What is the capital of France?") {
		t.Fatalf("calls %v, %v", calls, r.err)
	}
	r = runAnthropic(ctx, f, antParams("claude-sim", "task", tools[0], antTool("vote", voteSchema("agent2", "agent1"))))
	if calls := antCalls(&r.msg); len(calls) != 1 || calls[0][1] != `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}` {
		t.Errorf("vote %v", calls)
	}
	if rec := lastRecord(t, f); rec.Step != "vote" || strings.Join(rec.VoteEnum, ",") != "agent2,agent1" {
		t.Errorf("record %+v", rec)
	}
}

func TestAnthropicFaults(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - {fault: "429", retry_after: 2}
      - {fault: "529"}
      - {fault: cut}
      - {fault: malformed_tool_json}
      - {fault: malformed_tool_json}
  h: {always: {fault: hang}}
`))
	ctx := testCtx(t)
	tool := antTool("new_answer", newAnswerSchema())
	r := runAnthropic(ctx, f, antParams("m", "task", tool))
	var apiErr *anthropic.Error
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Type() != "rate_limit_error" ||
		apiErr.Response.Header.Get("Retry-After") != "2" || apiErr.RequestID != "req_sim000001" {
		t.Fatalf("429: %v", r.err)
	}
	c := anthropicClient(f)
	_, err := c.Messages.New(ctx, antParams("m", "task", tool))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || apiErr.Type() != "overloaded_error" {
		t.Fatalf("529: %v", err)
	}
	r = runAnthropic(ctx, f, antParams("m", "task", tool))
	if r.err == nil || r.msg.StopReason != "" || len(r.types) < 3 {
		t.Errorf("cut: err %v, events %v", r.err, r.types)
	}
	if rec := lastRecord(t, f); rec.Step != "fault:cut" || rec.Outcome != OutcomeFault || rec.OutputTokens == 0 {
		t.Errorf("cut record %+v", rec)
	}
	// Streamed, the broken arguments arrive as they are; the SDK's
	// accumulator replaces input that is not JSON with {}.
	r = runAnthropic(ctx, f, antParams("m", "task", tool))
	if calls := antCalls(&r.msg); r.err != nil || len(calls) != 1 || calls[0][1] != "{}" ||
		json.Valid([]byte(r.partial[0])) || !strings.HasPrefix(r.partial[0], `{"content":"[sim model m] Answer`) {
		t.Errorf("malformed (streamed): %v %q %v", calls, r.partial[0], r.err)
	}
	// Non-streamed, the broken arguments come as a string, not an object.
	m, err := c.Messages.New(ctx, antParams("m", "task", tool))
	var input any
	if err != nil || json.Unmarshal(m.Content[0].Input, &input) != nil {
		t.Fatalf("malformed: %v", err)
	}
	if s, ok := input.(string); !ok || !strings.HasPrefix(s, `{"content":"[sim model m] Answer`) {
		t.Errorf("malformed input %s", m.Content[0].Input)
	}

	hctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	n := len(f.sim.Requests()) // counted before the request goes out
	go func() { done <- runAnthropic(hctx, f, antParams("h", "task", tool)).err }()
	if err := f.sim.WaitFor(ctx, func(rs []Record) bool { return len(rs) > n && !rs[n].FirstByte.IsZero() }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("no error after cancel")
	}
	waitOutcome(t, f, n, OutcomeCancelled)
}

func TestAnthropicRejectsWhatTheAPIRejects(t *testing.T) {
	f := start(t, nil)
	ctx := testCtx(t)
	c := anthropicClient(f)
	for _, p := range []anthropic.MessageNewParams{
		{Model: "m", Messages: antParams("m", "x").Messages}, // max_tokens 0
		{Model: "m", MaxTokens: 10},                          // no messages
	} {
		_, err := c.Messages.New(ctx, p)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type() != "invalid_request_error" || apiErr.Message == "" {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if rec := lastRecord(t, f); rec.Wire != WireAnthropic || rec.Outcome != OutcomeRejected {
		t.Errorf("record %+v", rec)
	}
}

// Claude Code sends its own context as <system-reminder> sections in the
// user's message; the task the simulator reads (and quotes) is the user's
// words without them.
func TestAnthropicSystemRemindersAreNotTheTask(t *testing.T) {
	f := start(t, nil)
	reminder := "<system-reminder>\nAttribution for git commits: end them with Co-Authored-By: Claude.\n</system-reminder>\n"
	for _, blocks := range [][]anthropic.ContentBlockParamUnion{
		{anthropic.NewTextBlock(reminder), anthropic.NewTextBlock("Capital of France?")},
		{anthropic.NewTextBlock(reminder + "Capital of France?")},
	} {
		p := antParams("sim-claude", "")
		p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}
		r := runAnthropic(testCtx(t), f, p)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if text := antText(&r.msg); strings.Contains(text, "system-reminder") || !strings.Contains(text, "Capital of France?") {
			t.Errorf("final text %q", text)
		}
		rec := lastRecord(t, f)
		if last := rec.Messages[len(rec.Messages)-1]; last.Role != "user" || last.Content != "Capital of France?" {
			t.Errorf("recorded %+v", last)
		}
	}
	// An unclosed tag is the user's own text.
	if got := withoutReminders("say <system-reminder> literally"); got != "say <system-reminder> literally" {
		t.Errorf("unclosed: %q", got)
	}
}
