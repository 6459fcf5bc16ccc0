package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// translate runs raw event JSON through the accumulator, as the stream does,
// up to the terminal event.
func translate(t *testing.T, events ...string) []llm.Chunk {
	t.Helper()
	var a accumulator
	var out []llm.Chunk
	for _, e := range events {
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		chunks, failure := a.add(ev)
		if failure != nil {
			t.Fatalf("event %s: unexpected failure %+v", e, failure)
		}
		out = append(out, chunks...)
	}
	if !a.finished() {
		t.Fatalf("no terminal event")
	}
	return withoutToolArgs(out)
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

func TestTranslateEvents(t *testing.T) {
	done := func(reason string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkDone, FinishReason: reason} }
	call := func(id, name, args string) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	text := func(s string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkText, Text: s} }
	think := func(s string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkReasoning, Text: s} }
	usage := func(in, out, reasoning, cached int64) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out, ReasoningTokens: reasoning, CachedTokens: cached}}
	}
	small := usage(5, 2, 0, 0)
	tests := []struct {
		name   string
		events []string
		want   []llm.Chunk
	}{
		{
			name: "text deltas go out as they arrive, then usage and stop",
			events: []string{
				`{"type":"response.created","response":{"id":"r","status":"in_progress","output":[],"usage":null}}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
				textDelta("msg_1", "Hel"),
				textDelta("msg_1", "lo"),
				`{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}}`,
				completed(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}`, smallUsage),
			},
			want: []llm.Chunk{text("Hel"), text("lo"), small, done("stop")},
		},
		{
			name: "interleaved function calls are assembled by item and go out when done",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"add","arguments":""}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_m","type":"function_call","call_id":"call_m","name":"multiply","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_a","output_index":0,"delta":"{\"a\":"}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_m","output_index":1,"delta":"{\"a\":3}"}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_a","output_index":0,"delta":"2}"}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_m","type":"function_call","call_id":"call_m","name":"multiply"}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"add"}}`,
				completed(`{"id":"fc_a","type":"function_call","call_id":"call_a","name":"add","arguments":"{\"a\":2}"},{"id":"fc_m","type":"function_call","call_id":"call_m","name":"multiply","arguments":"{\"a\":3}"}`, smallUsage),
			},
			want: []llm.Chunk{call("call_m", "multiply", `{"a":3}`), call("call_a", "add", `{"a":2}`), small, done("tool_calls")},
		},
		{
			name: "arguments done replaces the deltas, the finished item wins over both",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"x\""}`,
				`{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"x\":1}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_2","type":"function_call","call_id":"call_2","name":"g","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":1,"delta":"{\"y\":"}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_2","type":"function_call","call_id":"call_2","name":"g","arguments":"{\"y\":2}"}}`,
				completed("", smallUsage),
			},
			want: []llm.Chunk{call("call_1", "f", `{"x":1}`), call("call_2", "g", `{"y":2}`), small, done("tool_calls")},
		},
		{
			name: "reasoning summary parts and items are separated by a blank line",
			events: []string{
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Plan**"}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":" first"}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"**Check**"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** first"},{"type":"summary_text","text":"**Check**"}]}}`,
				`{"type":"response.reasoning_text.delta","item_id":"rs_2","output_index":1,"content_index":0,"delta":"raw thought"}`,
				textDelta("msg_1", "answer"),
				completed("", smallUsage),
			},
			want: []llm.Chunk{think("**Plan**"), think(" first"), think("\n\n**Check**"), think("\n\nraw thought"), text("answer"), small, done("stop")},
		},
		{
			name: "a refusal is text",
			events: []string{
				`{"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't help with that."}`,
				completed("", smallUsage),
			},
			want: []llm.Chunk{text("I can't help with that."), small, done("stop")},
		},
		{
			name: "whole items without deltas go out once",
			events: []string{
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"content":[{"type":"reasoning_text","text":"c"}]}}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi "},{"type":"refusal","refusal":"no"}]}}`,
				completed(`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]},{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi "}]}`, smallUsage),
			},
			want: []llm.Chunk{think("a"), think("\n\nb"), think("\n\nc"), text("Hi "), text("no"), small, done("stop")},
		},
		{
			name: "only the final response: everything comes from its output",
			events: []string{
				completed(`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},`+
					`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Calling."}]},`+
					`{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}`, smallUsage),
			},
			want: []llm.Chunk{think("think"), text("Calling."), call("call_1", "f", "{}"), small, done("tool_calls")},
		},
		{
			name: "items without ids are told apart by output index",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{}"}`,
				`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"x"}`,
				completed(`{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}`, smallUsage),
			},
			want: []llm.Chunk{text("x"), call("call_1", "f", "{}"), small, done("tool_calls")},
		},
		{
			name: "usage counts reasoning and cached tokens",
			events: []string{
				textDelta("msg_1", "ok"),
				completed("", `{"input_tokens":2048,"input_tokens_details":{"cached_tokens":1920},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":256},"total_tokens":2348}`),
			},
			want: []llm.Chunk{text("ok"), usage(2048, 300, 256, 1920), done("stop")},
		},
		{
			name:   "no usage reported, none yielded",
			events: []string{textDelta("msg_1", "ok"), completed("", "null")},
			want:   []llm.Chunk{text("ok"), done("stop")},
		},
		{
			name: "output limit reached is length",
			events: []string{
				textDelta("msg_1", "trunc"),
				`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":` + smallUsage + `}}`,
			},
			want: []llm.Chunk{text("trunc"), small, done("length")},
		},
		{
			name: "a filtered response says so",
			events: []string{
				`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[],"usage":null}}`,
			},
			want: []llm.Chunk{done("content_filter")},
		},
		{
			name: "length wins over tool calls",
			events: []string{
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}}`,
				`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":null}}`,
			},
			want: []llm.Chunk{call("call_1", "f", "{}"), done("length")},
		},
		{
			name: "server-side tool items are not ours",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}}`,
				`{"type":"response.web_search_call.searching","item_id":"ws_1","output_index":0}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"x"}}}`,
				textDelta("msg_1", "found"),
				completed(`{"id":"ws_1","type":"web_search_call","status":"completed"}`, smallUsage),
			},
			want: []llm.Chunk{text("found"), small, done("stop")},
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
		name      string
		body      string
		want      []llm.Chunk
		wantErr   bool
		wantRetry bool
		wantMsg   string // substring of the error message
	}{
		{
			name: "completed",
			body: okStream,
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "ok"}, {Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 2}}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
		{
			name:      "cut before completed is a retryable error",
			body:      sse(textDelta("m", "a")),
			want:      []llm.Chunk{a},
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "stream ended before the response finished",
		},
		{
			name: "response.failed with a server error is retryable",
			body: sse(textDelta("m", "a"),
				`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"output":[]}}`),
			want:      []llm.Chunk{a},
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "response failed: The model failed to generate a response. (server_error)",
		},
		{
			name:      "response.failed with a rate limit is retryable",
			body:      sse(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached"},"output":[]}}`),
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "Rate limit reached (rate_limit_exceeded)",
		},
		{
			name:    "response.failed on the prompt is final",
			body:    sse(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: flagged"},"output":[]}}`),
			wantErr: true,
			wantMsg: "response failed: Invalid prompt: flagged (invalid_prompt)",
		},
		{
			name:      "error event with a server error is retryable",
			body:      sse(textDelta("m", "a"), `{"type":"error","code":"server_error","message":"upstream hiccup","param":null,"sequence_number":3}`),
			want:      []llm.Chunk{a},
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "error event in stream: upstream hiccup (server_error)",
		},
		{
			name:      "error event without a code is retryable",
			body:      sse(`{"type":"error","code":null,"message":"An error occurred while processing your request.","param":null,"sequence_number":1}`),
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "An error occurred while processing your request.",
		},
		{
			name:    "error event about the request is final",
			body:    sse(`{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input","sequence_number":1}`),
			wantErr: true,
			wantMsg: "Your input exceeds the context window of this model. (context_length_exceeded)",
		},
		{
			name:      "nested error event with a server error is retryable",
			body:      sse(textDelta("m", "a"), `{"type":"error","error":{"type":"server_error","code":"server_error","message":"The server had an error"},"sequence_number":2}`),
			want:      []llm.Chunk{a},
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "error event in stream: The server had an error (server_error)",
		},
		{
			name:    "nested error event about the request is final",
			body:    sse(`{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"too long","param":"input"},"sequence_number":2}`),
			wantErr: true,
			wantMsg: "too long (context_length_exceeded)",
		},
		{
			name:      "garbled event is retryable",
			body:      sse(textDelta("m", "a")) + "data: {\"type\":\"response.output_text.delta\",\"delta\":\n\n",
			want:      []llm.Chunk{a},
			wantErr:   true,
			wantRetry: true,
			wantMsg:   "stream interrupted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, serveSSE(tt.body))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || e.IsRetryable() != tt.wantRetry || e.Status != 0 || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %#v, want an *llm.Error (retry=%v) containing %q", err, tt.wantRetry, tt.wantMsg)
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
		body    string
		want    []llm.Chunk
		wantErr string // substring of a retryable *llm.Error; "" for success
	}{
		{
			name:    "before completed is a retryable error",
			body:    sse(textDelta("m", "a")),
			want:    []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantErr: "stream interrupted: connection closed by the server",
		},
		{
			name: "after completed keeps the answer",
			body: okStream,
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "ok"}, {Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 2}}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, llmtest.CutStream(tt.body))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			llmtest.RequireOutcome(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// holdOpen sends body, then holds the response open until the client goes
// away, and reports when that happened.
func holdOpen(body string, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the request
		// body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func TestCompletedEndsTheStreamWithoutWaitingForTheServer(t *testing.T) {
	gone := make(chan struct{})
	m := newModel(t, holdOpen(okStream, gone))
	got, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	if last := got[len(got)-1]; last.Kind != llm.ChunkDone {
		t.Fatalf("last chunk %v, want done", last)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("connection still open after response.completed")
	}
}

func TestConsumerBreakClosesTheStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(holdOpen(sse(textDelta("m", "first")), gone))
	m := New(Options{BaseURL: srv.URL, HTTPClient: srv.Client()})
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
	m := newModel(t, holdOpen(sse(textDelta("m", "first")), gone))
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

// TestToolArgsStream: argument deltas go out as they arrive, named by their
// call, so a display can show an answer written as new_answer's arguments
// while it streams.
func TestToolArgsStream(t *testing.T) {
	var a accumulator
	var got []llm.Chunk
	for _, e := range []string{
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"new_answer","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_a","output_index":0,"delta":"{\"content\":\"Par"}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_a","output_index":0,"delta":"is\"}"}`,
	} {
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatal(err)
		}
		chunks, failure := a.add(ev)
		if failure != nil {
			t.Fatal(failure)
		}
		got = append(got, chunks...)
	}
	_, args := toolArgs(got)
	if diff := cmp.Diff(map[string]string{"call_a new_answer": `{"content":"Paris"}`}, args); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}
