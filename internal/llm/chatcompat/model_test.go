package chatcompat

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sse renders events as a server would send them.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

func serveSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func newModel(t *testing.T, h http.Handler, stream bool) llm.Model {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(Options{Provider: "test", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "m1", Stream: stream, HTTPClient: srv.Client()})
}

var hello = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

func TestRequestBodySent(t *testing.T) {
	req := &llm.Request{
		Model: "kimi-k2",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "weather in Rome?"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"location":"Rome"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "40 C", Images: []llm.Image{{MIME: "image/png", Data: []byte("\x89PNG")}}}, // text only: images dropped
			{Role: llm.RoleAssistant, Content: "It is hot."},
		},
		Tools: []llm.ToolDef{
			{Name: "weather", Description: "Get weather", Parameters: map[string]any{
				"type":       "object",
				"properties": map[string]any{"location": map[string]any{"type": "string"}},
				"required":   []any{"location"},
			}},
			{Name: "noargs"},
		},
		Params: map[string]any{
			"temperature": 0.2,
			"top_p":       0.9,
			"max_tokens":  100,
			"top_k":       5,
			"extra_body": map[string]any{
				"top_k":                20,
				"chat_template_kwargs": map[string]any{"enable_thinking": false},
			},
			"stream":   false, // owned by the adapter: dropped
			"messages": "x",   // owned by the adapter: dropped
		},
	}
	wantCommon := map[string]any{
		"model": "kimi-k2",
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "weather in Rome?"},
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "weather", "arguments": `{"location":"Rome"}`},
			}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "40 C"},
			map[string]any{"role": "assistant", "content": "It is hot."},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{
				"name": "weather", "description": "Get weather",
				"parameters": map[string]any{
					"type":       "object",
					"properties": map[string]any{"location": map[string]any{"type": "string"}},
					"required":   []any{"location"},
				},
			}},
			map[string]any{"type": "function", "function": map[string]any{
				"name":       "noargs",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{}},
			}},
		},
		"temperature":          0.2,
		"top_p":                0.9,
		"max_tokens":           float64(100),
		"top_k":                float64(20),
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
	}
	tests := []struct {
		name   string
		stream bool
		extra  map[string]any
		reply  http.HandlerFunc
	}{
		{
			name:   "streaming asks for usage",
			stream: true,
			extra:  map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}},
			reply:  serveSSE(sse(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]")),
		},
		{
			name:   "non-streaming says stream false",
			stream: false,
			extra:  map[string]any{"stream": false},
			reply: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			var header http.Header
			h := func(w http.ResponseWriter, r *http.Request) {
				header = r.Header
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Errorf("decode body: %v", err)
				}
				tt.reply(w, r)
			}
			srv := httptest.NewServer(http.HandlerFunc(h))
			defer srv.Close()
			m := New(Options{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "default", Stream: tt.stream,
				HTTPClient: srv.Client(), Headers: map[string]string{"X-Title": "massgen"}})
			if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			for k, v := range wantCommon {
				want[k] = v
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			if diff := cmp.Diff(want, body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if got := header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q", got)
			}
			if got := header.Get("X-Title"); got != "massgen" {
				t.Errorf("X-Title = %q", got)
			}
		})
	}
}

func TestDefaultModelAndNoKey(t *testing.T) {
	// OpenAI's variables must not leak to another provider's endpoint.
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	var body struct {
		Model string `json:"model"`
	}
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header
		_ = json.NewDecoder(r.Body).Decode(&body)
		serveSSE(sse(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))(w, r)
	}))
	defer srv.Close()
	defer llm.HTTPClient.CloseIdleConnections()
	m := New(Options{BaseURL: srv.URL, Model: "fallback", Stream: true})
	if _, err := llmtest.Collect(m.Stream(t.Context(), hello)); err != nil {
		t.Fatal(err)
	}
	if body.Model != "fallback" {
		t.Errorf("model = %q, want the default from Options", body.Model)
	}
	if got := header.Values("Authorization"); len(got) != 0 {
		t.Errorf("Authorization sent without an API key: %q", got)
	}
	if got := header.Get("X-Leak"); got != "" {
		t.Errorf("OPENAI_CUSTOM_HEADERS applied: X-Leak = %q", got)
	}
}

func TestNonStreamingToolCalls(t *testing.T) {
	m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m1","choices":[{"index":0,
			"message":{"role":"assistant","content":"Computing.","reasoning_content":"add and multiply",
				"tool_calls":[
					{"id":"call_a","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}},
					{"id":"call_m","type":"function","function":{"name":"multiply","arguments":"{\"a\":2,\"b\":3}"}}]},
			"finish_reason":"tool_calls"}],
			"usage":{"prompt_tokens":205,"completion_tokens":53,"total_tokens":258,
				"prompt_tokens_details":{"cached_tokens":128},"completion_tokens_details":{"reasoning_tokens":12}}}`)
	}), false)
	got, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkReasoning, Text: "add and multiply"},
		{Kind: llm.ChunkText, Text: "Computing."},
		{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: "call_a", Name: "add", Arguments: `{"a":2,"b":3}`}},
		{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: "call_m", Name: "multiply", Arguments: `{"a":2,"b":3}`}},
		{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 205, OutputTokens: 53, ReasoningTokens: 12, CachedTokens: 128}},
		{Kind: llm.ChunkDone, FinishReason: "tool_calls"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}
