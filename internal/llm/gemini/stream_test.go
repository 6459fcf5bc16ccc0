package gemini

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
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func TestTranslateResponses(t *testing.T) {
	done := func(reason string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkDone, FinishReason: reason} }
	text := func(s string) llm.Chunk { return llm.Chunk{Kind: llm.ChunkText, Text: s} }
	toolCall := func(id, name, args string) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	usage := func(in, out, reasoning, cached int64) llm.Chunk {
		return llm.Chunk{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out, ReasoningTokens: reasoning, CachedTokens: cached}}
	}
	tests := []struct {
		name   string
		events []string
		want   []llm.Chunk
	}{
		{
			name: "thoughts are reasoning, text is text, in arrival order",
			events: []string{
				`{"candidates":[{"content":{"parts":[{"text":"**Planning**\n","thought":true}],"role":"model"},"index":0}]}`,
				`{"candidates":[{"content":{"parts":[{"text":"","thought":true,"thoughtSignature":"c2ln"},{"text":"Hello"}],"role":"model"},"index":0}]}`,
				`{"candidates":[{"content":{"parts":[{"text":" world"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"thoughtsTokenCount":30,"totalTokenCount":42}}`,
			},
			want: []llm.Chunk{
				{Kind: llm.ChunkReasoning, Text: "**Planning**\n"},
				text("Hello"), text(" world"),
				usage(10, 32, 30, 0),
				done("stop"),
			},
		},
		{
			name: "function calls are whole at once and keep the API's ids",
			events: []string{
				`{"candidates":[{"content":{"parts":[{"text":"Let me add."},{"functionCall":{"name":"add","args":{"b":3,"a":2},"id":"x1"}},{"functionCall":{"name":"now","id":"x2"}}],"role":"model"},"finishReason":"STOP","index":0}]}`,
			},
			want: []llm.Chunk{
				text("Let me add."),
				toolCall("x1", "add", `{"a":2,"b":3}`),
				toolCall("x2", "now", `{}`),
				done("tool_calls"),
			},
		},
		{
			name: "the last usage counts, with cached and tool-use tokens",
			events: []string{
				`{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}`,
				`{"candidates":[{"content":{"parts":[{"text":"b"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":900,"candidatesTokenCount":20,"cachedContentTokenCount":512,"toolUsePromptTokenCount":40,"totalTokenCount":960}}`,
			},
			want: []llm.Chunk{text("a"), text("b"), usage(940, 20, 0, 512), done("stop")},
		},
		{
			name:   "MAX_TOKENS is length",
			events: []string{`{"candidates":[{"content":{"parts":[{"text":"trunc"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}]}`},
			want:   []llm.Chunk{text("trunc"), done("length")},
		},
		{
			name:   "SAFETY is content_filter",
			events: []string{`{"candidates":[{"finishReason":"SAFETY","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"HIGH","blocked":true}]}]}`},
			want:   []llm.Chunk{done("content_filter")},
		},
		{
			name:   "a blocked prompt is content_filter",
			events: []string{`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}`},
			want:   []llm.Chunk{usage(7, 0, 0, 0), done("content_filter")},
		},
		{
			name:   "reasons without an equivalent pass in lower case",
			events: []string{`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"bad call","index":0}]}`},
			want:   []llm.Chunk{done("malformed_function_call")},
		},
		{
			name: "code execution is shown as fenced text",
			events: []string{
				`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(6*7)\n"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}},{"text":"It is 42."}],"role":"model"},"finishReason":"STOP","index":0}]}`,
			},
			want: []llm.Chunk{text("\n```python\nprint(6*7)\n```\n"), text("\n```\n42\n```\n"), text("It is 42."), done("stop")},
		},
		{
			name: "other candidates are ignored",
			events: []string{
				`{"candidates":[{"content":{"parts":[{"text":"mine"}],"role":"model"},"index":0},{"content":{"parts":[{"text":"other"}],"role":"model"},"index":1,"finishReason":"MAX_TOKENS"}]}`,
				`{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","index":0}]}`,
			},
			want: []llm.Chunk{text("mine"), text("."), done("stop")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, serveSSE(sse(tt.events...)))
			got, err := llmtest.Collect(m.Stream(t.Context(), hello))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMadeUpCallIDsAreUnique(t *testing.T) {
	event := `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"add","args":{"a":1}}},{"functionCall":{"name":"add","args":{"a":2}}}],"role":"model"},"finishReason":"STOP","index":0}]}`
	m := newModel(t, serveSSE(sse(event)))
	seen := map[string]bool{}
	for range 2 { // two responses, as in two turns
		chunks, err := llmtest.Collect(m.Stream(t.Context(), hello))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if c.Kind != llm.ChunkToolCall {
				continue
			}
			if !strings.HasPrefix(c.ToolCall.ID, "call_") || seen[c.ToolCall.ID] {
				t.Errorf("id %q: want a fresh call_<n>", c.ToolCall.ID)
			}
			seen[c.ToolCall.ID] = true
		}
	}
	if len(seen) != 4 {
		t.Errorf("got %d distinct ids, want 4", len(seen))
	}
}

func TestContinuation(t *testing.T) {
	var bodies []map[string]any
	h := func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "text/event-stream")
		if len(bodies) == 1 {
			_, _ = io.WriteString(w, sse(
				textEvent("first half, "),
				`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"CONTINUATION","continuationToken":"dG9r","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`))
			return
		}
		_, _ = io.WriteString(w, sse(
			textEvent("second half"),
			`{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":4,"totalTokenCount":6}}`))
	}
	m := newModel(t, http.HandlerFunc(h))
	got, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "first half, "},
		{Kind: llm.ChunkText, Text: "second half"},
		{Kind: llm.ChunkText, Text: "."},
		{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 12, OutputTokens: 9}},
		{Kind: llm.ChunkDone, FinishReason: "stop"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if len(bodies) != 2 {
		t.Fatalf("got %d requests, want 2", len(bodies))
	}
	if _, ok := bodies[0]["continuationToken"]; ok {
		t.Errorf("first request carries a continuation token")
	}
	if tok := bodies[1]["continuationToken"]; tok != "dG9r" {
		t.Errorf("second request continuationToken = %v, want dG9r", tok)
	}
	if diff := cmp.Diff(bodies[0]["contents"], bodies[1]["contents"]); diff != "" {
		t.Errorf("continuation changed the conversation:\n%s", diff)
	}
}

func TestStreamEndings(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		want      []llm.Chunk
		wantRetry bool   // want a retryable *llm.Error after want
		wantMsg   string // substring of its message
		wantAfter time.Duration
	}{
		{
			name: "finish reason ends the answer",
			body: sse(textEvent("a"), stopEvent),
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"},
				{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 2}},
				{Kind: llm.ChunkDone, FinishReason: "stop"}},
		},
		{
			name:      "a clean end without finish reason is a cut stream",
			body:      sse(textEvent("a"), textEvent("b")),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkText, Text: "b"}},
			wantRetry: true,
			wantMsg:   "stream ended before the response finished",
		},
		{
			name:      "an empty 200 is a cut stream",
			body:      "",
			wantRetry: true,
			wantMsg:   "stream ended before the response finished",
		},
		{
			name: "error event inside a 200 is retryable, with its retry delay",
			body: sse(textEvent("a"),
				`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}`),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantRetry: true,
			wantMsg:   "error event in stream: Resource has been exhausted",
			wantAfter: 3 * time.Second,
		},
		{
			name:      "garbled event is retryable",
			body:      sse(textEvent("a"), `{"candidates":[{"content":`),
			want:      []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
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
			if !tt.wantRetry {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || !e.IsRetryable() || e.Status != 0 || !strings.Contains(e.Message, tt.wantMsg) || e.After != tt.wantAfter {
				t.Fatalf("error = %#v, want a retryable *llm.Error containing %q, after %v", err, tt.wantMsg, tt.wantAfter)
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
			name:    "before the finish reason is a retryable error",
			body:    sse(textEvent("a")),
			want:    []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantErr: "stream interrupted: connection closed by the server",
		},
		{
			name:    "in the middle of an event is a retryable error",
			body:    sse(textEvent("a")) + `data: {"candidates": [{"content": {"par`,
			want:    []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}},
			wantErr: "stream interrupted: connection closed by the server",
		},
		{
			name: "after the finish reason keeps the answer",
			body: sse(textEvent("a"), stopEvent),
			want: []llm.Chunk{{Kind: llm.ChunkText, Text: "a"},
				{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 2}},
				{Kind: llm.ChunkDone, FinishReason: "stop"}},
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

// slowStream sends one chunk, then holds the response open until the client
// goes away, and reports when that happened.
func slowStream(gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the request
		// body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(textEvent("first")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func TestConsumerBreakClosesTheStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(slowStream(gone))
	m := New(Options{BaseURL: srv.URL, APIKey: "k", Model: "gemini-2.5-flash", HTTPClient: srv.Client()})
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
