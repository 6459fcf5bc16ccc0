package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

func TestBuiltinToolFlagsBecomeServerTools(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"stop here"}}`))
	}))
	defer srv.Close()
	m := New(Options{BaseURL: srv.URL, APIKey: "k", Model: "gpt-4o"})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Params: map[string]any{"enable_web_search": true, "enable_code_interpreter": true}}
	for range m.Stream(t.Context(), req) {
	}
	tools, _ := body["tools"].([]any)
	var types []string
	for _, tl := range tools {
		types = append(types, tl.(map[string]any)["type"].(string))
	}
	if len(types) != 2 || types[0] != "web_search" || types[1] != "code_interpreter" {
		t.Fatalf("tools sent = %v, want web_search and code_interpreter", types)
	}
	if _, leaked := body["enable_web_search"]; leaked {
		t.Error("the massgen flag leaked into the request body")
	}
}
