package anthropic

import (
	"encoding/json"
	"errors"
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

// sse renders events as the Messages API sends them: each data line is
// preceded by an event line naming its type.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &head)
		if head.Type != "" {
			fmt.Fprintf(&b, "event: %s\n", head.Type)
		}
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

// Events of a plain, complete response.
const (
	evStart     = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m1","stop_reason":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	evTextStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evStop0     = `{"type":"content_block_stop","index":0}`
	evEndTurn   = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`
	evMsgStop   = `{"type":"message_stop"}`
)

func evText(s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, s)
}

// okReply is a complete one-word answer.
var okReply = sse(evStart, evTextStart, evText("ok"), evStop0, evEndTurn, evMsgStop)

func serveSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func newModel(t *testing.T, h http.Handler) llm.Model {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(Options{Provider: "test", BaseURL: srv.URL, APIKey: "sk-ant-test", Model: "m1", HTTPClient: srv.Client()})
}

var hello = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// captured is one request as the test server saw it.
type captured struct {
	path   string
	header http.Header
	body   map[string]any
}

// capture serves reply and records each request.
func capture(t *testing.T, reply string) (*[]captured, string) {
	t.Helper()
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := captured{path: r.URL.Path, header: r.Header}
		if err := json.NewDecoder(r.Body).Decode(&c.body); err != nil {
			t.Errorf("decode body: %v", err)
		}
		got = append(got, c)
		serveSSE(reply)(w, r)
	}))
	t.Cleanup(srv.Close)
	return &got, srv.URL
}

func TestRequestBodySent(t *testing.T) {
	req := &llm.Request{
		Model: "claude-sonnet-4-5",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleSystem, Content: "use tools"},
			{Role: llm.RoleUser, Content: "weather in Rome and Oslo?"},
			{Role: llm.RoleAssistant, Content: "Checking.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "weather", Arguments: `{"location":"Rome"}`},
				{ID: "toolu_2", Name: "weather", Arguments: `{"location":`}, // cut off: sent as {}
			}},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "40 C"},
			{Role: llm.RoleTool, ToolCallID: "toolu_2", Content: "-3 C"},
			{Role: llm.RoleUser, Content: "and now?"},
			{Role: llm.RoleAssistant, Content: "Hot and cold."},
		},
		Tools: []llm.ToolDef{
			{Name: "weather", Description: "Get weather", Parameters: map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"location": map[string]any{"type": "string"}},
				"required":             []any{"location"},
				"additionalProperties": false,
			}},
			{Name: "noargs"},
		},
		Params: map[string]any{
			"temperature":    0.2,
			"top_p":          0.9,
			"top_k":          5,
			"max_tokens":     1000,
			"stop_sequences": []any{"END"},
			"tool_choice":    map[string]any{"type": "auto", "disable_parallel_tool_use": false},
			"extra_body":     map[string]any{"top_k": 20, "metadata": map[string]any{"user_id": "u1"}},
			"betas":          []any{"interleaved-thinking-2025-05-14", "context-1m-2025-08-07"},
			"stream":         false,         // owned by the adapter: dropped
			"messages":       "x",           // owned by the adapter: dropped
			"system":         "not mine",    // owned by the adapter: dropped
			"model":          "other-model", // owned by the adapter: dropped
		},
	}
	ephemeral := map[string]any{"type": "ephemeral"}
	want := map[string]any{
		"model":      "claude-sonnet-4-5",
		"max_tokens": float64(1000),
		"stream":     true,
		"system":     []any{map[string]any{"type": "text", "text": "be brief\n\nuse tools", "cache_control": ephemeral}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "weather in Rome and Oslo?", "cache_control": ephemeral},
			}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Checking."},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": map[string]any{"location": "Rome"}},
				map[string]any{"type": "tool_use", "id": "toolu_2", "name": "weather", "input": map[string]any{}},
			}},
			// Both results and the user's follow-up in one user message,
			// results first.
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "40 C"}}},
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": []any{map[string]any{"type": "text", "text": "-3 C"}}},
				map[string]any{"type": "text", "text": "and now?"},
			}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Hot and cold."},
			}},
		},
		"tools": []any{
			map[string]any{"name": "weather", "description": "Get weather", "input_schema": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"location": map[string]any{"type": "string"}},
				"required":             []any{"location"},
				"additionalProperties": false,
			}},
			map[string]any{"name": "noargs", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
		},
		"temperature":    0.2,
		"top_p":          0.9,
		"top_k":          float64(20),
		"stop_sequences": []any{"END"},
		"tool_choice":    map[string]any{"type": "auto", "disable_parallel_tool_use": false},
		"metadata":       map[string]any{"user_id": "u1"},
	}

	got, base := capture(t, okReply)
	// The OpenAI-style base with /v1 is accepted.
	m := New(Options{BaseURL: base + "/v1/", APIKey: "sk-ant-test", Model: "default", HTTPClient: http.DefaultClient,
		Headers: map[string]string{"X-Title": "massgen"}})
	defer http.DefaultClient.CloseIdleConnections()
	if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 {
		t.Fatalf("got %d requests, want 1", len(*got))
	}
	c := (*got)[0]
	if diff := cmp.Diff(want, c.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if c.path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", c.path)
	}
	for k, v := range map[string]string{
		"X-Api-Key":      "sk-ant-test",
		"X-Title":        "massgen",
		"Anthropic-Beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07",
	} {
		if got := c.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if got := c.header.Get("Anthropic-Version"); got == "" {
		t.Errorf("no anthropic-version header")
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name    string
		opt     int
		params  map[string]any
		want    float64
		wantErr string
	}{
		{name: "default when nothing is set", want: 8192},
		{name: "Options.MaxTokens is the default", opt: 1000, want: 1000},
		{name: "Params win over Options", opt: 1000, params: map[string]any{"max_tokens": 300}, want: 300},
		{name: "a JSON number", params: map[string]any{"max_tokens": float64(4096)}, want: 4096},
		{name: "a YAML unsigned integer", params: map[string]any{"max_tokens": uint64(2048)}, want: 2048},
		{name: "in extra_body", params: map[string]any{"extra_body": map[string]any{"max_tokens": 77}}, want: 77},
		{
			name:   "default grows above a large thinking budget",
			params: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 10000}},
			want:   18192,
		},
		{
			name:   "default kept above a small thinking budget",
			params: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2000}},
			want:   8192,
		},
		{name: "not a number", params: map[string]any{"max_tokens": "lots"}, wantErr: "max_tokens must be a positive integer"},
		{name: "fractional", params: map[string]any{"max_tokens": 1.5}, wantErr: "max_tokens must be a positive integer"},
		{name: "zero", params: map[string]any{"max_tokens": 0}, wantErr: "max_tokens must be a positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, base := capture(t, okReply)
			m := New(Options{BaseURL: base, Model: "m", MaxTokens: tt.opt, HTTPClient: http.DefaultClient})
			defer http.DefaultClient.CloseIdleConnections()
			_, err := llmtest.Collect(m.Stream(t.Context(), &llm.Request{Messages: hello.Messages, Params: tt.params}))
			if tt.wantErr != "" {
				e, ok := errors.AsType[*llm.Error](err)
				if !ok || e.Retry || !strings.Contains(e.Message, tt.wantErr) || len(*got) != 0 {
					t.Fatalf("error = %v after %d requests, want a final *llm.Error containing %q and no request", err, len(*got), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mt := (*got)[0].body["max_tokens"]; mt != tt.want {
				t.Errorf("max_tokens = %v, want %v", mt, tt.want)
			}
		})
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	// The SDK's client constructor would pick all of these up.
	t.Setenv("ANTHROPIC_API_KEY", "sk-must-not-leak")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-must-not-leak")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("ANTHROPIC_PROFILE", "nope")
	got, base := capture(t, okReply)
	defer llm.HTTPClient.CloseIdleConnections()
	m := New(Options{BaseURL: base, Model: "fallback"}) // no key, shared client
	if _, err := llmtest.Collect(m.Stream(t.Context(), hello)); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 {
		t.Fatalf("got %d requests at the configured base URL, want 1", len(*got))
	}
	c := (*got)[0]
	if c.body["model"] != "fallback" {
		t.Errorf("model = %v, want the default from Options", c.body["model"])
	}
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Leak"} {
		if v := c.header.Values(h); len(v) != 0 {
			t.Errorf("header %s sent: %q", h, v)
		}
	}
}

func TestInvalidRequestIsNotRetryable(t *testing.T) {
	tests := []struct {
		name  string
		model string
		msgs  []llm.Message
		want  string
	}{
		{"no model", "", hello.Messages, "no model: set Request.Model or Options.Model"},
		{"unknown role", "m", []llm.Message{{Role: "narrator", Content: "x"}}, `message 0: unsupported role "narrator"`},
		{"tool result without id", "m", []llm.Message{{Role: llm.RoleTool, Content: "x"}}, "message 0: tool result without a tool call id"},
		{"tool call without id", "m", []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f"}}}}, "message 0: tool call 0 has no id or name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{BaseURL: "http://127.0.0.1:1", Model: tt.model})
			_, err := llmtest.Collect(m.Stream(t.Context(), &llm.Request{Messages: tt.msgs}))
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || e.Retry || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("error = %v, want a final *llm.Error containing %q", err, tt.want)
			}
		})
	}
}
