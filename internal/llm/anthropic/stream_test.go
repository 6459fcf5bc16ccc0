package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// translate runs raw event JSON through the translator, as the stream does.
func translate(t *testing.T, events ...string) []llm.Chunk {
	t.Helper()
	tr := translator{memory: newThinkingMemory()}
	var out []llm.Chunk
	for _, e := range events {
		var ev anthropic.MessageStreamEventUnion
		if err := ev.UnmarshalJSON([]byte(e)); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		out = append(out, tr.add(ev)...)
	}
	return withoutToolArgs(append(out, tr.final()...))
}

// withoutToolArgs drops the argument fragments a stream yields for displays
// (TestToolArgsStream checks them), leaving what the tool loop uses.
func withoutToolArgs(chunks []llm.Chunk) []llm.Chunk {
	out := chunks[:0:0]
	for _, c := range chunks {
		if c.Kind != llm.ChunkToolArgs {
			out = append(out, c)
		}
	}
	return out
}

func blockStart(i int, block string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block)
}

func blockDelta(i int, delta string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, delta)
}

func blockStop(i int) string { return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i) }

func jsonDelta(i int, s string) string {
	return blockDelta(i, fmt.Sprintf(`{"type":"input_json_delta","partial_json":%q}`, s))
}

func toolStart(i int, id, name string) string {
	return blockStart(i, fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":{}}`, id, name))
}

func msgDelta(stop string, usage string) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":%s}`, stop, usage)
}

func TestTranslateEvents(t *testing.T) {
	text := func(s string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkText, Text: s} }
	reasoning := func(s string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkReasoning, Text: s} }
	call := func(id, name, args string) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	usage := func(in, out, reasoning, cached int64) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out, ReasoningTokens: reasoning, CachedTokens: cached}}
	}
	withWrites := func(c llm.Chunk, writes int64) llm.Chunk {
		u := *c.Usage
		u.CacheWriteTokens = writes
		c.Usage = &u
		return c
	}
	done := func(reason string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkDone, FinishReason: reason} }
	start := func(in, write, read int) string {
		return fmt.Sprintf(`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`, in, write, read)
	}

	tests := []struct {
		name   string
		events []string
		want   []llm.Chunk
	}{
		{
			name: "each tool call goes out whole when its block stops",
			events: []string{
				start(502, 0, 0),
				evTextStart, evText("Adding."), evStop0,
				toolStart(1, "toolu_a", "add"), jsonDelta(1, ""), jsonDelta(1, `{"a": 2`), jsonDelta(1, `, "b": 3}`), blockStop(1),
				toolStart(2, "toolu_m", "multiply"), jsonDelta(2, `{"a": 2, "b": 3}`), blockStop(2),
				msgDelta("tool_use", `{"output_tokens":137}`), evMsgStop,
			},
			want: []llm.Chunk{
				text("Adding."),
				call("toolu_a", "add", `{"a": 2, "b": 3}`),
				call("toolu_m", "multiply", `{"a": 2, "b": 3}`),
				usage(502, 137, 0, 0),
				done("tool_use"),
			},
		},
		{
			name: "a call without fragments has the input it started with",
			events: []string{
				start(5, 0, 0),
				toolStart(0, "toolu_n", "now"), blockStop(0),
				blockStart(1, `{"type":"tool_use","id":"toolu_w","name":"where","input":{"city":"Rome"}}`), blockStop(1),
				msgDelta("tool_use", `{"output_tokens":9}`), evMsgStop,
			},
			want: []llm.Chunk{call("toolu_n", "now", "{}"), call("toolu_w", "where", `{"city":"Rome"}`), usage(5, 9, 0, 0), done("tool_use")},
		},
		{
			name: "a call whose block never stopped goes out at the end",
			events: []string{
				start(5, 0, 0),
				toolStart(0, "toolu_x", "f"), jsonDelta(0, `{"k":1}`),
				msgDelta("tool_use", `{"output_tokens":9}`), evMsgStop,
			},
			want: []llm.Chunk{call("toolu_x", "f", `{"k":1}`), usage(5, 9, 0, 0), done("tool_use")},
		},
		{
			name: "malformed input is passed on as the model wrote it",
			events: []string{
				start(5, 0, 0),
				toolStart(0, "toolu_x", "f"), jsonDelta(0, `{"k":`), blockStop(0),
				msgDelta("max_tokens", `{"output_tokens":9}`), evMsgStop,
			},
			want: []llm.Chunk{call("toolu_x", "f", `{"k":`), usage(5, 9, 0, 0), done("max_tokens")},
		},
		{
			name: "thinking streams as reasoning; signatures stay out of it",
			events: []string{
				start(424, 0, 0),
				blockStart(0, `{"type":"thinking","thinking":"","signature":""}`),
				blockDelta(0, `{"type":"thinking_delta","thinking":"The user"}`),
				blockDelta(0, `{"type":"thinking_delta","thinking":" asks."}`),
				blockDelta(0, `{"type":"thinking_delta","thinking":""}`),
				blockDelta(0, `{"type":"signature_delta","signature":"EqUD"}`),
				blockStop(0),
				blockStart(1, `{"type":"redacted_thinking","data":"opaque"}`), blockStop(1),
				blockStart(2, `{"type":"text","text":""}`), blockDelta(2, `{"type":"text_delta","text":"Hi"}`), blockStop(2),
				msgDelta("end_turn", `{"output_tokens":109,"output_tokens_details":{"thinking_tokens":80}}`), evMsgStop,
			},
			want: []llm.Chunk{reasoning("The user"), reasoning(" asks."), text("Hi"), usage(424, 109, 80, 0), done("end_turn")},
		},
		{
			name: "cache writes and reads count as input; reads are cached",
			events: []string{
				start(12, 1500, 3000), evTextStart, evText("ok"), evStop0,
				msgDelta("end_turn", `{"output_tokens":7}`), evMsgStop,
			},
			want: []llm.Chunk{text("ok"), withWrites(usage(4512, 7, 0, 3000), 1500), done("end_turn")},
		},
		{
			name: "message_delta totals replace message_start's",
			events: []string{
				start(12, 0, 0), evTextStart, evText("ok"), evStop0,
				msgDelta("end_turn", `{"input_tokens":20,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7}`), evMsgStop,
			},
			want: []llm.Chunk{text("ok"), withWrites(usage(125, 7, 0, 100), 5), done("end_turn")},
		},
		{
			name: "server tools are not client tool calls",
			events: []string{
				start(10, 0, 0),
				blockStart(0, `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}`),
				jsonDelta(0, `{"query":"x"}`), blockStop(0),
				blockStart(1, `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`), blockStop(1),
				blockStart(2, `{"type":"text","text":""}`), blockDelta(2, `{"type":"text_delta","text":"Found."}`), blockStop(2),
				msgDelta("end_turn", `{"output_tokens":3}`), evMsgStop,
			},
			want: []llm.Chunk{text("Found."), usage(10, 3, 0, 0), done("end_turn")},
		},
		{
			name: "no stop reason: tool_use with calls, end_turn without",
			events: []string{
				start(1, 0, 0), toolStart(0, "toolu_1", "f"), blockStop(0), evMsgStop,
			},
			want: []llm.Chunk{call("toolu_1", "f", "{}"), usage(1, 1, 0, 0), done("tool_use")},
		},
		{
			name: "other stop reasons pass through",
			events: []string{
				start(1, 0, 0), evTextStart, evText("I can't"), evStop0, msgDelta("refusal", `{"output_tokens":2}`), evMsgStop,
			},
			want: []llm.Chunk{text("I can't"), usage(1, 2, 0, 0), done("refusal")},
		},
		{
			name: "events after message_stop are ignored",
			events: []string{
				start(1, 0, 0), evTextStart, evText("a"), evStop0, msgDelta("end_turn", `{"output_tokens":2}`), evMsgStop,
				evText("late"),
			},
			want: []llm.Chunk{text("a"), usage(1, 2, 0, 0), done("end_turn")},
		},
		{
			name:   "deltas for blocks that never started do not crash",
			events: []string{start(1, 0, 0), blockDelta(7, `{"type":"text_delta","text":"x"}`), jsonDelta(9, "{"), blockStop(3), evMsgStop},
			want:   []llm.Chunk{text("x"), usage(1, 1, 0, 0), done("end_turn")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, translate(t, tt.events...)); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEndings(t *testing.T) {
	a := llm.Chunk{Kind: llm.ChunkText, Text: "a"}
	tests := []struct {
		name       string
		body       string
		want       []llm.Chunk
		wantErr    string // substring of a retryable *llm.Error's message; "" for success
		wantStatus int
	}{
		{
			name: "message_stop ends the response",
			body: sse(evStart, evTextStart, evText("a"), evStop0, evEndTurn, evMsgStop),
			want: []llm.Chunk{a, {Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}}, {Kind: llm.ChunkDone, FinishReason: "end_turn"}},
		},
		{
			name: "a stop reason without message_stop is complete",
			body: sse(evStart, evTextStart, evText("a"), evStop0, evEndTurn),
			want: []llm.Chunk{a, {Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}}, {Kind: llm.ChunkDone, FinishReason: "end_turn"}},
		},
		{
			name:    "ended before the stop reason is a retryable error",
			body:    sse(evStart, evTextStart, evText("a")),
			want:    []llm.Chunk{a},
			wantErr: "stream ended before the response finished",
		},
		{
			name:    "an empty stream is a retryable error",
			body:    "",
			wantErr: "stream ended before the response finished",
		},
		{
			name:       "overloaded_error event is retryable with status 529",
			body:       sse(evStart, evTextStart, evText("a")) + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			want:       []llm.Chunk{a},
			wantErr:    "error event in stream: overloaded_error: Overloaded",
			wantStatus: 529,
		},
		{
			name:       "api_error event is retryable with status 500",
			body:       "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n",
			wantErr:    "error event in stream: api_error: Internal server error",
			wantStatus: 500,
		},
		{
			name:    "an error event that is not JSON is retryable",
			body:    "event: error\ndata: upstream went away\n\n",
			wantErr: "error event in stream: upstream went away",
		},
		{
			name:    "a garbled event is retryable",
			body:    sse(evStart, evTextStart, evText("a")) + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n",
			want:    []llm.Chunk{a},
			wantErr: "stream interrupted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, serveSSE(tt.body))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || !e.IsRetryable() || e.Status != tt.wantStatus || !strings.Contains(e.Message, tt.wantErr) {
				t.Fatalf("error = %#v, want a retryable *llm.Error with status %d containing %q", err, tt.wantStatus, tt.wantErr)
			}
			if e.Provider != "test" || e.Model != "m1" {
				t.Errorf("error names %q/%q, want test/m1", e.Provider, e.Model)
			}
		})
	}
}

func TestConnectionDropped(t *testing.T) {
	tests := []struct {
		name    string
		events  []string
		want    []llm.Chunk
		wantErr string // substring of a retryable *llm.Error; "" for success
	}{
		{
			name:    "before the stop reason is a retryable error",
			events:  []string{evStart, evTextStart, evText("a")},
			want:    []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantErr: "stream interrupted: connection closed by the server",
		},
		{
			name:   "after the stop reason keeps the answer",
			events: []string{evStart, evTextStart, evText("a"), evStop0, evEndTurn},
			want: []llm.Chunk{
				{Kind: llm.ChunkText, Text: "a"},
				{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}},
				{Kind: llm.ChunkDone, FinishReason: "end_turn"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, llmtest.CutStream(sse(tt.events...)))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			llmtest.RequireOutcome(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestWholeMessageInsteadOfStream(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []llm.Chunk
		wantErr string
	}{
		{
			name: "a JSON message is yielded in stream order",
			body: `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[
				{"type":"thinking","thinking":"plan","signature":"sig"},
				{"type":"text","text":"Checking."},
				{"type":"tool_use","id":"toolu_1","name":"weather","input":{"location":"Florence,Italy"}}],
				"stop_reason":"tool_use","usage":{"input_tokens":394,"cache_creation_input_tokens":6,"cache_read_input_tokens":100,"output_tokens":66}}`,
			want: []llm.Chunk{
				{Kind: llm.ChunkReasoning, Text: "plan"},
				{Kind: llm.ChunkText, Text: "Checking."},
				{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: "toolu_1", Name: "weather", Arguments: `{"location":"Florence,Italy"}`}},
				{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 500, OutputTokens: 66, CachedTokens: 100, CacheWriteTokens: 6}},
				{Kind: llm.ChunkDone, FinishReason: "tool_use"},
			},
		},
		{
			name:    "JSON that is not a message is retryable",
			body:    `{"hello":"world"}`,
			wantErr: "unreadable response: the response is not a whole JSON message",
		},
		{
			name:    "truncated JSON is retryable",
			body:    `{"id":"msg_1","type":"message","content":[`,
			wantErr: "unreadable response",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tt.body)
			}))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			llmtest.RequireOutcome(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// slowStream sends one text delta, then holds the response open until the
// client goes away, and reports when that happened.
func slowStream(gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the request
		// body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(evStart, evTextStart, evText("first")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func TestConsumerBreakClosesTheStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(slowStream(gone))
	m := New(Options{BaseURL: srv.URL, Model: "m", HTTPClient: srv.Client()})
	for c, err := range m.Stream(t.Context(), hello) {
		if err != nil || c.Text != "first" {
			t.Fatalf("first item = %v, %v", c, err)
		}
		break
	}
	llmtest.RequireServerGone(t, gone)
	srv.Close()
	goleak.VerifyNone(t)
}

func TestCancelMidStreamReturnsPromptly(t *testing.T) {
	gone := make(chan struct{})
	m := newModel(t, slowStream(gone))
	llmtest.RequireCancelMidStream(t, m, hello, "first")
	<-gone
}

func TestCancelBeforeResponse(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		cancel()
		<-r.Context().Done()
	}))
	_, err := llmtest.Collect(m.Stream(ctx, hello))
	llmtest.RequireCanceled(t, err)
}

func TestMessageStopEndsTheResponseEvenIfTheConnectionStaysOpen(t *testing.T) {
	gone := make(chan struct{})
	m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okReply)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	got, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n != 3 || got[n-1].Kind != llm.ChunkDone {
		t.Errorf("chunks = %v, want text, usage, done", got)
	}
	<-gone
}

// toolArgs runs events through translate's path keeping only the argument
// fragments, joined per call ("id name").
func toolArgs(chunks []llm.Chunk) (order []string, args map[string]string) {
	args = map[string]string{}
	for _, c := range chunks {
		if c.Kind != llm.ChunkToolArgs {
			continue
		}
		k := c.ToolCall.ID + " " + c.ToolCall.Name
		if _, ok := args[k]; !ok {
			order = append(order, k)
		}
		args[k] += c.Text
	}
	return order, args
}

// TestToolArgsStream: input_json_delta fragments go out as they arrive,
// named by their call, so a display can show an answer written as
// new_answer's input while it streams.
func TestToolArgsStream(t *testing.T) {
	got := translateAll(t,
		toolStart(0, "toolu_a", "new_answer"),
		jsonDelta(0, `{"content":"Par`),
		jsonDelta(0, `is"}`),
		blockStop(0),
		msgDelta("tool_use", `{"output_tokens":9}`),
		`{"type":"message_stop"}`,
	)
	if len(got) < 3 || got[0].Kind != llm.ChunkToolArgs || got[2].Kind != llm.ChunkToolCall {
		t.Fatalf("fragments should precede the call: %+v", got)
	}
	_, args := toolArgs(got)
	if diff := cmp.Diff(map[string]string{"toolu_a new_answer": `{"content":"Paris"}`}, args); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}

func translateAll(t *testing.T, events ...string) []llm.Chunk {
	t.Helper()
	tr := translator{memory: newThinkingMemory()}
	var out []llm.Chunk
	for _, e := range events {
		var ev anthropic.MessageStreamEventUnion
		if err := ev.UnmarshalJSON([]byte(e)); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		out = append(out, tr.add(ev)...)
	}
	return append(out, tr.final()...)
}
