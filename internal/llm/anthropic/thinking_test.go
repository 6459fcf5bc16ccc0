package anthropic

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// A response that thinks, calls a tool, thinks again (redacted), and calls
// another tool, as interleaved thinking does.
var thinkingToolReply = sse(
	evStart,
	blockStart(0, `{"type":"thinking","thinking":"","signature":""}`),
	blockDelta(0, `{"type":"thinking_delta","thinking":"Need the weather."}`),
	blockDelta(0, `{"type":"signature_delta","signature":"sig-1"}`),
	blockStop(0),
	blockStart(1, `{"type":"text","text":""}`), blockDelta(1, `{"type":"text_delta","text":"Checking."}`), blockStop(1),
	toolStart(2, "toolu_a", "weather"), jsonDelta(2, `{"location":"Rome"}`), blockStop(2),
	blockStart(3, `{"type":"redacted_thinking","data":"opaque"}`), blockStop(3),
	toolStart(4, "toolu_b", "weather"), jsonDelta(4, `{"location":"Oslo"}`), blockStop(4),
	msgDelta("tool_use", `{"output_tokens":50}`), evMsgStop,
)

func TestThinkingBlocksReturnInTheToolLoop(t *testing.T) {
	thinking := map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}
	tests := []struct {
		name   string
		params map[string]any
		want   []any // content of the assistant message in the second request
	}{
		{
			name:   "with thinking on, the signed blocks go back before their calls",
			params: thinking,
			want: []any{
				map[string]any{"type": "thinking", "thinking": "Need the weather.", "signature": "sig-1"},
				map[string]any{"type": "text", "text": "Checking."},
				map[string]any{"type": "tool_use", "id": "toolu_a", "name": "weather", "input": map[string]any{"location": "Rome"}},
				map[string]any{"type": "redacted_thinking", "data": "opaque"},
				map[string]any{"type": "tool_use", "id": "toolu_b", "name": "weather", "input": map[string]any{"location": "Oslo"}},
			},
		},
		{
			name:   "with thinking off, nothing is added",
			params: map[string]any{"thinking": map[string]any{"type": "disabled"}},
			want: []any{
				map[string]any{"type": "text", "text": "Checking."},
				map[string]any{"type": "tool_use", "id": "toolu_a", "name": "weather", "input": map[string]any{"location": "Rome"}},
				map[string]any{"type": "tool_use", "id": "toolu_b", "name": "weather", "input": map[string]any{"location": "Oslo"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, base := capture(t, thinkingToolReply)
			m := New(Options{BaseURL: base, Model: "m", HTTPClient: http.DefaultClient})
			defer http.DefaultClient.CloseIdleConnections()
			first := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "weather?"}}, Params: tt.params}
			chunks, err := llmtest.Collect(m.Stream(t.Context(), first))
			if err != nil {
				t.Fatal(err)
			}
			// Build the next request of the loop the way the agent does:
			// from the chunks only.
			assistant := llm.Message{Role: llm.RoleAssistant}
			var results []llm.Message
			for _, c := range chunks {
				switch c.Kind {
				case llm.ChunkText:
					assistant.Content += c.Text
				case llm.ChunkToolCall:
					assistant.ToolCalls = append(assistant.ToolCalls, *c.ToolCall)
					results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: c.ToolCall.ID, Content: "20 C"})
				}
			}
			second := &llm.Request{Messages: append(append(first.Messages, assistant), results...), Params: tt.params}
			if _, err := llmtest.Collect(m.Stream(t.Context(), second)); err != nil {
				t.Fatal(err)
			}
			msgs := (*got)[1].body["messages"].([]any)
			if diff := cmp.Diff(tt.want, msgs[1].(map[string]any)["content"]); diff != "" {
				t.Errorf("assistant content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThinkingMemoryIsBounded(t *testing.T) {
	mem := newThinkingMemory()
	for i := range maxRememberedCalls + 10 {
		mem.remember(fmt.Sprintf("toolu_%d", i), []thought{{thinking: "t", signature: "s"}})
	}
	if n := len(mem.byCall); n != maxRememberedCalls {
		t.Errorf("remembers %d calls, want %d", n, maxRememberedCalls)
	}
	if got := mem.recall("toolu_0"); len(got) != 0 {
		t.Errorf("the oldest call is still remembered")
	}
	if got := mem.recall(fmt.Sprintf("toolu_%d", maxRememberedCalls+9)); len(got) != 1 {
		t.Errorf("the newest call is forgotten")
	}
}
