package gemini

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// signaturesSent runs req through a model and returns the thoughtSignature
// of every functionCall part it sent, "" where there was none.
func signaturesSent(t *testing.T, req *llm.Request) []string {
	t.Helper()
	var got capture
	m := newModel(t, got.handler(t, sse(stopEvent)))
	if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	var sigs []string
	for _, c := range got.body["contents"].([]any) {
		for _, p := range c.(map[string]any)["parts"].([]any) {
			p := p.(map[string]any)
			if p["functionCall"] == nil {
				continue
			}
			s, _ := p["thoughtSignature"].(string)
			sigs = append(sigs, s)
		}
	}
	return sigs
}

func TestThoughtSignaturesGoBack(t *testing.T) {
	// A Gemini 3 answer: parallel calls, only the first signed.
	answer := `{"candidates":[{"content":{"parts":[
		{"functionCall":{"name":"add","args":{"a":2},"id":"sig-a"},"thoughtSignature":"c2lnLWE="},
		{"functionCall":{"name":"mul","args":{"a":2},"id":"sig-m"}}],"role":"model"},"finishReason":"STOP","index":0}]}`
	m := newModel(t, serveSSE(sse(answer)))
	chunks, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	var calls []llm.ToolCall
	for _, c := range chunks {
		if c.Kind == llm.ChunkToolCall {
			calls = append(calls, *c.ToolCall)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("got %d calls, want 2", len(calls))
	}
	placeholder := base64.StdEncoding.EncodeToString([]byte(skipSignature))

	turn := func(model string, calls ...llm.ToolCall) *llm.Request {
		msgs := []llm.Message{{Role: llm.RoleUser, Content: "go"}, {Role: llm.RoleAssistant, ToolCalls: calls}}
		for _, c := range calls {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "ok"})
		}
		return &llm.Request{Model: model, Messages: msgs}
	}
	tests := []struct {
		name string
		req  *llm.Request
		want []string
	}{
		{"the remembered signature goes back on its call", turn("gemini-3-pro-preview", calls...), []string{"c2lnLWE=", ""}},
		{"and to Gemini 2 alike", turn("gemini-2.5-flash", calls...), []string{"c2lnLWE=", ""}},
		{"calls never seen get the placeholder on Gemini 3", turn("gemini-3-flash", llm.ToolCall{ID: "old1", Name: "f"}, llm.ToolCall{ID: "old2", Name: "g"}), []string{placeholder, ""}},
		{"unknown models are treated like Gemini 3", turn("gemini-flash-latest", llm.ToolCall{ID: "old1", Name: "f"}), []string{placeholder}},
		{"Gemini 2 does not need one", turn("models/gemini-2.5-pro", llm.ToolCall{ID: "old1", Name: "f"}), []string{""}},
		{"a reused id with another name is another call", turn("gemini-3-pro-preview", llm.ToolCall{ID: "sig-a", Name: "other"}), []string{placeholder}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, signaturesSent(t, tt.req)); diff != "" {
				t.Errorf("signatures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSignatureStoreForgetsTheOldest(t *testing.T) {
	s := newSignatureStore(2)
	s.put("a", "f", []byte("1"))
	s.put("b", "f", []byte("2"))
	s.put("a", "f", []byte("1b")) // an update is not a new entry
	s.put("c", "f", []byte("3"))
	got := []string{string(s.get("a", "f")), string(s.get("b", "f")), string(s.get("c", "f"))}
	if diff := cmp.Diff([]string{"", "2", "3"}, got); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
}
