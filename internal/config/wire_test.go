package config_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/anthropic"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llm/gemini"
	"github.com/massgen/massgen/internal/llm/openai"
)

// neverSent are backend keys massgen does not send: keys upstream MassGen
// passed through to providers (permissions, websocket_mode, Claude's tool
// search switches, AG2's group_config, concurrent_tool_execution) and a key
// nobody knows. Each test config writes all of them.
var neverSent = []string{
	"permissions: {default: read}",
	"websocket_mode: true",
	"enable_tool_search: true",
	"tool_search_variant: bm25",
	"enable_strict_tool_use: true",
	"enable_programmatic_flow: true",
	"group_config: {max_round: 3}",
	"concurrent_tool_execution: true",
	"massgen_made_up_param: 7",
}

// An unknown backend key never reaches the wire, through any of the four
// adapters: the config is parsed as a run parses it, its parameters go to
// the adapter, and the request body a local server receives is read. A
// parameter of another API stays out too, while the API's own parameters
// and extra_body's content go through.
func TestUnknownBackendKeysNeverReachTheWire(t *testing.T) {
	tests := []struct {
		adapter, typ string
		other        string // a parameter of another API
		own, ownWire string // one of this API's, and how the body spells it
		model        func(url string) llm.Model
	}{
		{"chatcompat", "chatcompletion", "stop_sequences: [END]", "temperature: 0.25", `"temperature":0.25`,
			func(url string) llm.Model {
				return chatcompat.New(chatcompat.Options{BaseURL: url + "/v1", APIKey: "k", Model: "m", Stream: true})
			}},
		{"openai", "openai", "reasoning_effort: high", "max_output_tokens: 321", `"max_output_tokens":321`,
			func(url string) llm.Model {
				return openai.New(openai.Options{BaseURL: url + "/v1", APIKey: "k", Model: "m"})
			}},
		{"anthropic", "claude", "stop: [END]", "top_k: 17", `"top_k":17`,
			func(url string) llm.Model {
				return anthropic.New(anthropic.Options{BaseURL: url, APIKey: "k", Model: "m"})
			}},
		{"gemini", "gemini", "safety_settings: []", "temperature: 0.25", `"temperature":0.25`,
			func(url string) llm.Model { return gemini.New(gemini.Options{BaseURL: url, APIKey: "k", Model: "m"}) }},
	}
	for _, tc := range tests {
		t.Run(tc.adapter, func(t *testing.T) {
			src := "agents:\n  - id: a\n    backend:\n      type: " + tc.typ + "\n      model: m\n"
			for _, l := range append(append([]string{}, neverSent...), tc.other, tc.own, "extra_body: {massgen_explicit_param: 1}") {
				src += "      " + l + "\n"
			}
			cfg, err := config.Parse([]byte(src), "wire.yaml", func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				data, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(data))
				mu.Unlock()
				// A refusal ends the request at once; only its body matters.
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error": {"message": "recorded", "type": "invalid_request_error", "code": 400, "status": "INVALID_ARGUMENT"}}`))
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Params: cfg.Agents[0].Backend.Params}
			for range tc.model(srv.URL).Stream(ctx, req) {
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) == 0 {
				t.Fatal("no request reached the server")
			}
			for _, body := range bodies {
				if !json.Valid([]byte(body)) {
					t.Fatalf("body is not JSON: %s", body)
				}
				for _, l := range append(append([]string{}, neverSent...), tc.other) {
					name, _, _ := strings.Cut(l, ":")
					if strings.Contains(body, name) {
						t.Errorf("%s reaches the wire: %s", name, body)
					}
				}
				for _, want := range []string{tc.ownWire, "massgen_explicit_param"} {
					if !strings.Contains(strings.ReplaceAll(body, " ", ""), want) {
						t.Errorf("%s is not in the request: %s", want, body)
					}
				}
			}
		})
	}
}
