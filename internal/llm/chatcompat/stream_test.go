package chatcompat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// translate runs raw chunk JSON through the accumulator, as the stream does.
func translate(t *testing.T, events ...string) []llm.Chunk {
	t.Helper()
	var a accumulator
	var out []llm.Chunk
	for _, e := range events {
		var c openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		out = append(out, a.add(c)...)
	}
	return withoutToolArgs(append(out, a.final()...))
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

func TestTranslateChunks(t *testing.T) {
	done := func(reason string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkDone, FinishReason: reason} }
	call := func(id, name, args string) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	tests := []struct {
		name   string
		events []string
		want   []llm.Chunk
	}{
		{
			name: "interleaved tool calls are assembled by index",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"add","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"m","type":"function","function":{"name":"multiply","arguments":"{\"a\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":2"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":3}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			want: []llm.Chunk{call("a", "add", `{"a":2}`), call("m", "multiply", `{"a":3}`), done("tool_calls")},
		},
		{
			name: "a new id at a reused index is a new call",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"add","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"sub","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			want: []llm.Chunk{call("a", "add", "{}"), call("b", "sub", "{}"), done("tool_calls")},
		},
		{
			name: "fragments without an index continue the last call",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"add","arguments":"{\"a\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			want: []llm.Chunk{call("a", "add", `{"a":1}`), done("stop")},
		},
		{
			name: "reasoning_content and reasoning both count, reasoning_content first",
			events: []string{
				`{"choices":[{"index":0,"delta":{"content":"","reasoning_content":"think"}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":" more","reasoning_content":null}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":"dup","reasoning_content":" again"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"answer"},"finish_reason":"stop"}]}`,
			},
			want: []llm.Chunk{
				{Kind: llm.ChunkReasoning, Text: "think"},
				{Kind: llm.ChunkReasoning, Text: " more"},
				{Kind: llm.ChunkReasoning, Text: " again"},
				{Kind: llm.ChunkText, Text: "answer"},
				done("stop"),
			},
		},
		{
			name: "the last usage wins and comes before done",
			events: []string{
				`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":null}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
				`{"choices":[],"usage":{"prompt_tokens":93,"completion_tokens":32,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":7}}}`,
			},
			want: []llm.Chunk{
				{Kind: llm.ChunkText, Text: "hi"},
				{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 93, OutputTokens: 32, ReasoningTokens: 7, CachedTokens: 64}},
				done("length"),
			},
		},
		{
			name: "other choices are ignored",
			events: []string{
				`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "mine"}, done("stop")},
		},
		{
			name: "no finish reason with tool calls reports tool_calls",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			},
			want: []llm.Chunk{call("a", "f", "{}"), done("tool_calls")},
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
	text := func(s string) string {
		return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
	}
	finish := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	tests := []struct {
		name      string
		body      string
		want      []llm.Chunk
		wantRetry bool   // want a retryable *llm.Error after want
		wantMsg   string // substring of its message
	}{
		{
			name: "finish reason and DONE",
			body: sse(text("a"), finish, "[DONE]"),
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
		{
			name: "finish reason without DONE is complete",
			body: sse(text("a"), finish),
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
		{
			name: "DONE without finish reason is complete",
			body: sse(text("a"), "[DONE]"),
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
		{
			name:      "cut mid-way is a retryable error",
			body:      sse(text("a"), text("b")),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkText, Text: "b"}},
			wantRetry: true,
			wantMsg:   "stream ended before the response finished",
		},
		{
			name:      "DONE inside generated text does not count",
			body:      sse(text("data: [DONE]")),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "data: [DONE]"}},
			wantRetry: true,
			wantMsg:   "stream ended before the response finished",
		},
		{
			name:      "error event inside a 200 is retryable",
			body:      sse(text("a"), `{"error":{"message":"Provider returned error","code":502}}`),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantRetry: true,
			wantMsg:   "Provider returned error",
		},
		{
			name:      "garbled event is retryable",
			body:      sse(text("a"), `{"choices":[{"index":0,"delta":`),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantRetry: true,
			wantMsg:   "stream interrupted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, serveSSE(tt.body), true)
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if !tt.wantRetry {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || !e.IsRetryable() || e.Status != 0 || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %#v, want a retryable *llm.Error containing %q", err, tt.wantMsg)
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
			name:    "before the finish reason is a retryable error",
			events:  []string{`{"choices":[{"index":0,"delta":{"content":"a"}}]}`},
			want:    []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantErr: "stream interrupted: connection closed by the server",
		},
		{
			name: "after the finish reason keeps the answer",
			events: []string{
				`{"choices":[{"index":0,"delta":{"content":"a"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, llmtest.CutStream(sse(tt.events...)), true)
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			llmtest.RequireOutcome(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// slowStream sends one chunk, then holds the response open until the client
// goes away, and reports when that happened.
func slowStream(gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the request
		// body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(`{"choices":[{"index":0,"delta":{"content":"first"}}]}`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func TestConsumerBreakClosesTheStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(slowStream(gone))
	m := New(Options{BaseURL: srv.URL, Stream: true, HTTPClient: srv.Client()})
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
	m := newModel(t, slowStream(gone), true)
	llmtest.RequireCancelMidStream(t, m, hello, "first")
	<-gone
}

func TestCancelBeforeResponse(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				cancel()
				<-r.Context().Done()
			}), stream)
			_, err := llmtest.Collect(m.Stream(ctx, hello))
			llmtest.RequireCanceled(t, err)
		})
	}
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

// TestToolArgsStream: argument fragments go out as they arrive, named by
// their call, so a display can show an answer written as new_answer's
// arguments while it streams.
func TestToolArgsStream(t *testing.T) {
	var a accumulator
	var got []llm.Chunk
	for _, e := range []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"new_answer","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"m","type":"function","function":{"name":"vote","arguments":"{\"a\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\"Par"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	} {
		var c openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, a.add(c)...)
		if len(got) == 3 && got[2].Kind != llm.ChunkToolArgs {
			t.Fatalf("third fragment not yielded at once: %+v", got)
		}
	}
	order, args := toolArgs(got)
	want := map[string]string{"a new_answer": `{"content":"Paris"}`, "m vote": `{"a"`}
	if diff := cmp.Diff(want, args); diff != "" || len(order) != 2 || order[0] != "m vote" {
		t.Errorf("fragments (-want +got):\n%s (order %v)", diff, order)
	}
}
