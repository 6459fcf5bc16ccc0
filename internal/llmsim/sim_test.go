package llmsim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a started simulator and an official-SDK client pointed at it.
type fixture struct {
	sim    *Server
	base   string
	client openai.Client
	hc     *http.Client
}

func start(t *testing.T, sc *Scenario) *fixture {
	t.Helper()
	sim := New(sc)
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// An own transport, so that its idle connections (and their goroutines)
	// can be closed when the test ends.
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		tr.CloseIdleConnections()
	})
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("sim"),
		option.WithMaxRetries(0), option.WithHTTPClient(hc))
	return &fixture{sim: sim, base: base, client: client, hc: hc}
}

func scenario(t *testing.T, src string) *Scenario {
	t.Helper()
	sc, err := ParseScenario([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func fnTool(name string, params map[string]any) openai.ChatCompletionToolUnionParam {
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name, Parameters: params})
}

func newAnswerTool() openai.ChatCompletionToolUnionParam {
	return fnTool("new_answer", map[string]any{"type": "object",
		"properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []string{"content"}})
}

func voteTool(enum ...string) openai.ChatCompletionToolUnionParam {
	return fnTool("vote", map[string]any{"type": "object", "properties": map[string]any{
		"agent_id": map[string]any{"type": "string", "enum": enum},
		"reason":   map[string]any{"type": "string"},
	}})
}

func params(model, user string, tools ...openai.ChatCompletionToolUnionParam) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a test."), openai.UserMessage(user)},
		Tools:         tools,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// streamResult is a stream consumed through the SDK's accumulator.
type streamResult struct {
	acc      openai.ChatCompletionAccumulator
	chunks   []openai.ChatCompletionChunk
	finished []openai.FinishedChatCompletionToolCall
	err      error
}

func (r *streamResult) message() openai.ChatCompletionMessage { return r.acc.Choices[0].Message }

func runStream(t *testing.T, ctx context.Context, f *fixture, p openai.ChatCompletionNewParams) *streamResult {
	t.Helper()
	st := f.client.Chat.Completions.NewStreaming(ctx, p)
	defer st.Close()
	r := new(streamResult)
	for st.Next() {
		c := st.Current()
		r.chunks = append(r.chunks, c)
		if !r.acc.AddChunk(c) {
			t.Fatalf("accumulator rejected chunk %d: %s", len(r.chunks), c.RawJSON())
		}
		if tc, ok := r.acc.JustFinishedToolCall(); ok {
			r.finished = append(r.finished, tc)
		}
	}
	r.err = st.Err()
	return r
}

func lastRecord(t *testing.T, f *fixture) Record {
	t.Helper()
	recs := f.sim.Requests()
	if len(recs) == 0 {
		t.Fatal("no request recorded")
	}
	return recs[len(recs)-1]
}

func TestStreamingText(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {final: "The final answer is forty-two, as computed by the simulator."}}`))
	r := runStream(t, testCtx(t), f, params("m", "What is six times seven?"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	msg := r.message()
	if msg.Content != "The final answer is forty-two, as computed by the simulator." {
		t.Errorf("content = %q", msg.Content)
	}
	if len(msg.ToolCalls) != 0 {
		t.Errorf("unexpected tool calls %v", msg.ToolCalls)
	}
	if got := r.acc.Choices[0].FinishReason; got != "stop" {
		t.Errorf("finish_reason = %q", got)
	}
	if len(r.chunks) < 4 { // role, >= 1 content, finish, usage
		t.Errorf("only %d chunks", len(r.chunks))
	}
	if d := r.chunks[0].Choices[0].Delta; d.Role != "assistant" {
		t.Errorf("first delta role = %q", d.Role)
	}
	rec := lastRecord(t, f)
	if rec.Step != "text" || rec.Outcome != OutcomeCompleted || !rec.Stream || rec.Model != "m" {
		t.Errorf("record = %+v", rec)
	}
	if rec.OutputTokens != int(r.acc.Usage.CompletionTokens) || rec.OutputTokens != countTokens(msg.Content) {
		t.Errorf("tokens: record %d, usage %d, text %d", rec.OutputTokens, r.acc.Usage.CompletionTokens, countTokens(msg.Content))
	}
	if rec.PromptTokens != int(r.acc.Usage.PromptTokens) || rec.PromptTokens < 1 {
		t.Errorf("prompt tokens: record %d, usage %d", rec.PromptTokens, r.acc.Usage.PromptTokens)
	}
	if len(rec.Messages) != 2 || rec.Messages[1].Role != "user" || rec.Messages[1].Content != "What is six times seven?" {
		t.Errorf("messages = %+v", rec.Messages)
	}
}

func TestNonStreamingText(t *testing.T) {
	f := start(t, nil)
	res, err := f.client.Chat.Completions.New(testCtx(t), params("plain", "Say hello"))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Choices[0].Message.Content
	if !strings.HasPrefix(got, "[sim model plain] Final answer to: Say hello. ") {
		t.Errorf("content = %q", got)
	}
	if res.Choices[0].FinishReason != "stop" || res.Object != "chat.completion" || res.ID != "chatcmpl-sim000001" {
		t.Errorf("completion = %+v", res)
	}
	if int(res.Usage.CompletionTokens) != countTokens(got) || res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
		t.Errorf("usage = %+v", res.Usage)
	}
	if rec := lastRecord(t, f); rec.Stream || rec.Outcome != OutcomeCompleted || rec.FirstByte.IsZero() {
		t.Errorf("record = %+v", rec)
	}
	// Deterministic: the same request gets the same text.
	again, err := f.client.Chat.Completions.New(testCtx(t), params("plain", "Say hello"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Choices[0].Message.Content != got {
		t.Errorf("not deterministic:\n%q\n%q", got, again.Choices[0].Message.Content)
	}
}

func TestNewAnswerToolCall(t *testing.T) {
	f := start(t, nil)
	ctx := testCtx(t)
	user := "<ORIGINAL MESSAGE> What is the capital of France? <END OF ORIGINAL MESSAGE>\n\n<CURRENT ANSWERS from the agents>\n(no answers available yet)\n<END OF CURRENT ANSWERS>"
	for n, want := range []string{"Answer 1 to: What is the capital of France? ", "Answer 2 to: What is the capital of France? "} {
		r := runStream(t, ctx, f, params("gpt-sim", user, newAnswerTool()))
		if r.err != nil {
			t.Fatal(r.err)
		}
		calls := r.message().ToolCalls
		if len(calls) != 1 || calls[0].Function.Name != "new_answer" || calls[0].ID != callID(n+1, 0) {
			t.Fatalf("tool calls = %+v", calls)
		}
		var args struct{ Content string }
		if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil {
			t.Fatalf("arguments %q: %v", calls[0].Function.Arguments, err)
		}
		if !strings.HasPrefix(args.Content, "[sim model gpt-sim] "+want) {
			t.Errorf("content = %q", args.Content)
		}
		if words := len(strings.Fields(args.Content)); words < 40 || words > 90 {
			t.Errorf("answer has %d words", words)
		}
		if len(r.finished) != 1 || r.finished[0].Name != "new_answer" || r.finished[0].Arguments != calls[0].Function.Arguments {
			t.Errorf("JustFinishedToolCall = %+v", r.finished)
		}
		if r.acc.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("finish_reason = %q", r.acc.Choices[0].FinishReason)
		}
		// Arguments arrive in several fragments after a header chunk.
		frags := 0
		for _, c := range r.chunks {
			if len(c.Choices) > 0 && len(c.Choices[0].Delta.ToolCalls) > 0 && c.Choices[0].Delta.ToolCalls[0].Function.Arguments != "" {
				frags++
			}
		}
		if frags < 3 {
			t.Errorf("arguments in %d fragments", frags)
		}
	}
	rec := lastRecord(t, f)
	if rec.Step != "answer" || len(rec.Tools) != 1 || rec.Tools[0] != "new_answer" {
		t.Errorf("record = %+v", rec)
	}
}

func TestVoteUsesFirstEnumLabel(t *testing.T) {
	f := start(t, nil)
	r := runStream(t, testCtx(t), f, params("m", "task", newAnswerTool(), voteTool("agent2", "agent1")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	calls := r.message().ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "vote" {
		t.Fatalf("tool calls = %+v", calls)
	}
	if want := `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}`; calls[0].Function.Arguments != want {
		t.Errorf("arguments = %s, want %s", calls[0].Function.Arguments, want)
	}
	rec := lastRecord(t, f)
	if rec.Step != "vote" || strings.Join(rec.VoteEnum, ",") != "agent2,agent1" {
		t.Errorf("record = %+v", rec)
	}
}

func TestSeveralCallsInOneResponse(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - text: "Doing both."
        calls:
          - {name: vote, arguments: '{"agent_id":"agent1","reason":"good"}'}
          - {name: new_answer, arguments: '{"content":"better"}'}
          - {name: submit}
`))
	ctx := testCtx(t)
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool(), voteTool("agent1")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	msg := r.message()
	if msg.Content != "Doing both." {
		t.Errorf("content = %q", msg.Content)
	}
	want := [][2]string{{"vote", `{"agent_id":"agent1","reason":"good"}`}, {"new_answer", `{"content":"better"}`}, {"submit", `{}`}}
	if len(msg.ToolCalls) != len(want) {
		t.Fatalf("tool calls = %+v", msg.ToolCalls)
	}
	for i, w := range want {
		if tc := msg.ToolCalls[i]; tc.Function.Name != w[0] || tc.Function.Arguments != w[1] || tc.ID != callID(1, i) {
			t.Errorf("call %d = %+v, want %v", i, tc, w)
		}
	}
	if rec := lastRecord(t, f); rec.Step != "calls" {
		t.Errorf("step = %q", rec.Step)
	}
	// The script ran out: the default policy answers the next request.
	res, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool(), voteTool("agent1")))
	if err != nil {
		t.Fatal(err)
	}
	if tcs := res.Choices[0].Message.ToolCalls; len(tcs) != 1 || tcs[0].Function.Name != "vote" {
		t.Errorf("after the script: %+v", tcs)
	}
}

func TestNonStreamingToolCall(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{answer: "Answer {n} of {model}"}, {restart: "too short", reason: "add detail"}]}}`))
	ctx := testCtx(t)
	res, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Choices[0].Message
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Arguments != `{"content":"Answer 1 of m"}` || res.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message = %+v", m)
	}
	if m.JSON.Content.Raw() != "null" {
		t.Errorf("content = %s, want null", m.JSON.Content.Raw())
	}
	res, err = f.client.Chat.Completions.New(ctx, params("m", "check", fnTool("submit", nil), fnTool("restart_orchestration", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if tcs := res.Choices[0].Message.ToolCalls; len(tcs) != 1 || tcs[0].Function.Name != "restart_orchestration" ||
		tcs[0].Function.Arguments != `{"reason":"too short","instructions":"add detail"}` {
		t.Errorf("tool calls = %+v", tcs)
	}
	// Default policy for post-evaluation: submit.
	res, err = f.client.Chat.Completions.New(ctx, params("m", "check", fnTool("submit", nil), fnTool("restart_orchestration", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if tcs := res.Choices[0].Message.ToolCalls; len(tcs) != 1 || tcs[0].Function.Arguments != `{"confirmed":true}` {
		t.Errorf("tool calls = %+v", tcs)
	}
}

func TestTTFTAndPacing(t *testing.T) {
	const ttft = 150 * time.Millisecond
	f := start(t, scenario(t, `models: {slow: {ttft_ms: 150, tokens_per_second: 200, final: "one two three four five six seven eight nine ten eleven twelve"}}`))
	ctx := testCtx(t)
	t0 := time.Now()
	st := f.client.Chat.Completions.NewStreaming(ctx, params("slow", "go"))
	defer st.Close()
	var first time.Time
	var text strings.Builder
	for st.Next() {
		if first.IsZero() {
			first = time.Now()
		}
		if c := st.Current(); len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	end := time.Now()
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if d := first.Sub(t0); d < ttft {
		t.Errorf("first chunk after %v, want >= %v", d, ttft)
	}
	n := countTokens(text.String())
	// n tokens at 200/s after the first: at least (n-1)*5ms of generation.
	if d, min := end.Sub(first), time.Duration(n-1)*5*time.Millisecond; d < min-time.Millisecond {
		t.Errorf("generation took %v, want >= %v for %d tokens", d, min, n)
	}
	rec := lastRecord(t, f)
	if d := rec.FirstByte.Sub(rec.Start); d < ttft {
		t.Errorf("record: first byte after %v", d)
	}
	// Non-streaming waits TTFT plus the generation time too.
	t0 = time.Now()
	if _, err := f.client.Chat.Completions.New(ctx, params("slow", "go")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < ttft+time.Duration(n-1)*5*time.Millisecond {
		t.Errorf("non-streaming took %v", d)
	}
}

func TestUsageChunkOnlyWhenAsked(t *testing.T) {
	f := start(t, nil)
	ctx := testCtx(t)
	p := params("m", "hi")
	r := runStream(t, ctx, f, p)
	last := r.chunks[len(r.chunks)-1]
	if len(last.Choices) != 0 || last.Usage.CompletionTokens == 0 || last.Usage.TotalTokens != last.Usage.PromptTokens+last.Usage.CompletionTokens {
		t.Errorf("last chunk = %s", last.RawJSON())
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	r = runStream(t, ctx, f, p)
	for _, c := range r.chunks {
		if len(c.Choices) == 0 || c.JSON.Usage.Raw() != "null" {
			t.Errorf("usage chunk without include_usage: %s", c.RawJSON())
		}
	}
}
