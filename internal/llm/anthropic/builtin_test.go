package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

func TestServerToolFlagsBecomeServerTools(t *testing.T) {
	var body map[string]any
	var beta string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		beta = r.Header.Get("anthropic-beta")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"stop here"}}`))
	}))
	defer srv.Close()
	m := New(Options{BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Params: map[string]any{"enable_web_search": true, "enable_code_execution": true}}
	for range m.Stream(t.Context(), req) {
	}
	tools, _ := body["tools"].([]any)
	var types []string
	for _, tl := range tools {
		types = append(types, tl.(map[string]any)["type"].(string))
	}
	if len(types) != 2 || types[0] != "web_search_20250305" || types[1] != "code_execution_20250522" {
		t.Fatalf("tools sent = %v", types)
	}
	if !strings.Contains(beta, "code-execution-2025-05-22") {
		t.Errorf("anthropic-beta = %q, want the code execution beta", beta)
	}
	if _, leaked := body["enable_web_search"]; leaked {
		t.Error("the massgen flag leaked into the request body")
	}
}
