package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// body builds the JSON the adapter would send for req.
func body(t *testing.T, m *model, req *llm.Request) map[string]any {
	t.Helper()
	b, err := m.buildParams(req, "m")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(b.params)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func newTestModel() *model { return New(Options{BaseURL: "http://127.0.0.1:1"}).(*model) }

func TestMessageMapping(t *testing.T) {
	ephemeral := map[string]any{"type": "ephemeral"}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	cached := func(s string) map[string]any {
		return map[string]any{"type": "text", "text": s, "cache_control": ephemeral}
	}
	result := func(id, s string) map[string]any {
		r := map[string]any{"type": "tool_result", "tool_use_id": id}
		if s != "" {
			r["content"] = []any{text(s)}
		}
		return r
	}
	use := func(id, name string, input map[string]any) map[string]any {
		return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
	}
	user := func(blocks ...any) map[string]any { return map[string]any{"role": "user", "content": blocks} }
	assistant := func(blocks ...any) map[string]any { return map[string]any{"role": "assistant", "content": blocks} }

	tests := []struct {
		name       string
		msgs       []llm.Message
		wantSystem any // nil: no system parameter
		want       []any
	}{
		{
			name:       "no system message, no system parameter; the task is still marked",
			msgs:       []llm.Message{{Role: llm.RoleUser, Content: "task"}},
			wantSystem: nil,
			want:       []any{user(cached("task"))},
		},
		{
			name: "system messages anywhere join the system parameter",
			msgs: []llm.Message{
				{Role: llm.RoleSystem, Content: "a"},
				{Role: llm.RoleUser, Content: "task"},
				{Role: "developer", Content: "b"},
				{Role: llm.RoleSystem, Content: ""},
			},
			wantSystem: []any{cached("a\n\nb")},
			want:       []any{user(cached("task"))},
		},
		{
			name: "consecutive user messages merge; the last text of the first is marked",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "context"},
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, Content: "answer"},
				{Role: llm.RoleUser, Content: "more"},
			},
			want: []any{user(text("context"), cached("task")), assistant(text("answer")), user(text("more"))},
		},
		{
			name: "tool results merge into one user message, ahead of text",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "add", Arguments: `{"a":1}`}, {ID: "b", Name: "mul", Arguments: ``}}},
				{Role: llm.RoleUser, Content: "hurry"},
				{Role: llm.RoleTool, ToolCallID: "a", Content: "2"},
				{Role: llm.RoleTool, ToolCallID: "b", Content: ""},
			},
			want: []any{
				user(cached("task")),
				assistant(use("a", "add", map[string]any{"a": float64(1)}), use("b", "mul", map[string]any{})),
				user(result("a", "2"), result("b", ""), text("hurry")),
			},
		},
		{
			name: "empty messages are left out",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, Content: ""},
				{Role: llm.RoleUser, Content: ""},
				{Role: llm.RoleUser, Content: "again"},
			},
			want: []any{user(text("task"), cached("again"))},
		},
		{
			name: "arguments that are not an object become {}",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
					{ID: "a", Name: "f", Arguments: `[1,2]`},
					{ID: "b", Name: "f", Arguments: `null`},
					{ID: "c", Name: "f", Arguments: ` {"k":"v"} `},
				}},
			},
			want: []any{
				user(cached("task")),
				assistant(use("a", "f", map[string]any{}), use("b", "f", map[string]any{}), use("c", "f", map[string]any{"k": "v"})),
			},
		},
		{
			name: "a failed call's result carries is_error",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "add", Arguments: `{}`}}},
				{Role: llm.RoleTool, ToolCallID: "a", Content: "Error: add needs both a and b", IsError: true},
			},
			want: []any{
				user(cached("task")),
				assistant(use("a", "add", map[string]any{})),
				user(map[string]any{"type": "tool_result", "tool_use_id": "a", "is_error": true,
					"content": []any{text("Error: add needs both a and b")}}),
			},
		},
		{
			name: "a tool's images follow its text as base64 image blocks; a type the API refuses is left out",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: "task"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "shot", Arguments: `{}`}}},
				{Role: llm.RoleTool, ToolCallID: "a", Content: "[image: image/png, 4 bytes]", Images: []llm.Image{
					{MIME: "image/png", Data: []byte("\x89PNG")},
					{MIME: "image/svg+xml", Data: []byte("<svg/>")},
				}},
			},
			want: []any{
				user(cached("task")),
				assistant(use("a", "shot", map[string]any{})),
				user(map[string]any{"type": "tool_result", "tool_use_id": "a", "content": []any{
					text("[image: image/png, 4 bytes]"),
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw=="}},
				}}),
			},
		},
		{
			name: "a conversation opening with tool results marks no task",
			msgs: []llm.Message{
				{Role: llm.RoleTool, ToolCallID: "a", Content: "2"},
			},
			want: []any{user(result("a", "2"))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := body(t, newTestModel(), &llm.Request{Messages: tt.msgs})
			if diff := cmp.Diff(tt.want, got["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSystem, got["system"]); diff != "" {
				t.Errorf("system (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolSchema(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   map[string]any
	}{
		{"nil schema takes no arguments", nil, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"missing type is object", map[string]any{"properties": map[string]any{"x": map[string]any{"type": "integer"}}},
			map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}},
		{"everything else is verbatim", map[string]any{"type": "object", "$defs": map[string]any{"d": true}, "anyOf": []any{}},
			map[string]any{"type": "object", "$defs": map[string]any{"d": true}, "anyOf": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := tt.params
			got := body(t, newTestModel(), &llm.Request{Messages: hello.Messages, Tools: []llm.ToolDef{{Name: "f", Parameters: params}}})
			tools := got["tools"].([]any)
			if diff := cmp.Diff(tt.want, tools[0].(map[string]any)["input_schema"]); diff != "" {
				t.Errorf("input_schema (-want +got):\n%s", diff)
			}
			if tt.params != nil {
				if _, ok := tt.params["type"]; !ok && len(tt.params) != 1 {
					t.Errorf("caller's schema was modified: %v", tt.params)
				}
			}
		})
	}
}

func TestBetas(t *testing.T) {
	tests := []struct {
		name    string
		betas   any
		want    string
		wantErr bool
	}{
		{name: "list", betas: []any{"a", "b"}, want: "a,b"},
		{name: "string list", betas: []string{"a"}, want: "a"},
		{name: "comma-separated string", betas: "a, b", want: "a,b"},
		{name: "empty list sends no header", betas: []any{}, want: ""},
		{name: "not strings", betas: []any{1}, wantErr: true},
		{name: "a map", betas: map[string]any{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, base := capture(t, okReply)
			m := New(Options{BaseURL: base, Model: "m", HTTPClient: http.DefaultClient})
			defer http.DefaultClient.CloseIdleConnections()
			_, err := llmtest.Collect(m.Stream(t.Context(), &llm.Request{Messages: hello.Messages, Params: map[string]any{"betas": tt.betas}}))
			if tt.wantErr {
				if e, ok := errors.AsType[*llm.Error](err); !ok || e.Retry || !strings.Contains(e.Message, "betas: ") {
					t.Fatalf("error = %v, want a final *llm.Error about betas", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := (*got)[0]
			if h := c.header.Get("Anthropic-Beta"); h != tt.want {
				t.Errorf("anthropic-beta = %q, want %q", h, tt.want)
			}
			if _, ok := c.body["betas"]; ok {
				t.Errorf("betas left in the body")
			}
		})
	}
}
