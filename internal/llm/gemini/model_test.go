package gemini

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// capture serves reply and records every request it receives.
type capture struct {
	path, query string
	header      http.Header
	body        map[string]any
}

func (c *capture) handler(t *testing.T, reply string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.path, c.query, c.header = r.URL.Path, r.URL.RawQuery, r.Header
		c.body = nil
		if err := json.NewDecoder(r.Body).Decode(&c.body); err != nil {
			t.Errorf("decode body: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, reply)
	}
}

func TestRequestBodySent(t *testing.T) {
	req := &llm.Request{
		Model: "gemini-2.5-pro",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "weather in Rome, and the time?"},
			{Role: llm.RoleAssistant, Content: "Checking.", ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "weather", Arguments: `{"location":"Rome","days":2}`},
				{ID: "call_b", Name: "clock", Arguments: ""},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_a", Content: "40 C", Images: []llm.Image{{MIME: "image/png", Data: []byte("\x89PNG")}}}, // text only: images dropped
			{Role: llm.RoleTool, ToolCallID: "call_b", Content: ` {"time":"noon"}`},
			{Role: llm.RoleAssistant, Content: "It is hot at noon.", ToolCalls: []llm.ToolCall{{ID: "call_c", Name: "clock", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_c", Content: "Error: clock is broken", IsError: true},
			{Role: llm.RoleSystem, Content: "answer in English"},
			{Role: llm.RoleUser, Content: "thanks"},
			{Role: llm.RoleUser, Content: ""}, // nothing to send
		},
		Tools: []llm.ToolDef{
			{Name: "weather", Description: "Get weather", Parameters: map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"location": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
				"required":             []any{"location"},
				"additionalProperties": false,
			}},
			{Name: "clock"},
		},
		Params: map[string]any{
			"temperature":     0.2,
			"top_p":           0.9,
			"top_k":           40,
			"max_tokens":      uint64(100), // YAML decoders produce uint64
			"stop":            "END",
			"seed":            7,
			"thinking_config": map[string]any{"thinking_budget": 1024, "include_thoughts": true},
			"reasoning":       map[string]any{"effort": "high"}, // not Gemini's: ignored
			"enable_mcp":      true,                             // not Gemini's: ignored
		},
	}
	want := map[string]any{
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "weather in Rome, and the time?"}}},
			map[string]any{"role": "model", "parts": []any{
				map[string]any{"text": "Checking."},
				map[string]any{"functionCall": map[string]any{"id": "call_a", "name": "weather", "args": map[string]any{"location": "Rome", "days": float64(2)}}},
				map[string]any{"functionCall": map[string]any{"id": "call_b", "name": "clock"}},
			}},
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"functionResponse": map[string]any{"id": "call_a", "name": "weather", "response": map[string]any{"content": "40 C"}}},
				map[string]any{"functionResponse": map[string]any{"id": "call_b", "name": "clock", "response": map[string]any{"time": "noon"}}},
			}},
			map[string]any{"role": "model", "parts": []any{
				map[string]any{"text": "It is hot at noon."},
				map[string]any{"functionCall": map[string]any{"id": "call_c", "name": "clock"}},
			}},
			// A failed call's text goes under "error", as Google documents.
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"functionResponse": map[string]any{"id": "call_c", "name": "clock", "response": map[string]any{"error": "Error: clock is broken"}}},
			}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "thanks"}}},
		},
		"systemInstruction": map[string]any{"role": "user", "parts": []any{
			map[string]any{"text": "be brief"},
			map[string]any{"text": "answer in English"},
		}},
		"tools": []any{map[string]any{"functionDeclarations": []any{
			map[string]any{"name": "weather", "description": "Get weather", "parametersJsonSchema": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"location": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
				"required":             []any{"location"},
				"additionalProperties": false,
			}},
			map[string]any{"name": "clock"},
		}}},
		"generationConfig": map[string]any{
			"temperature":     0.2,
			"topP":            0.9,
			"topK":            float64(40),
			"maxOutputTokens": float64(100),
			"stopSequences":   []any{"END"},
			"seed":            float64(7),
			"thinkingConfig":  map[string]any{"thinkingBudget": float64(1024), "includeThoughts": true},
		},
	}
	var got capture
	srv := httptest.NewServer(got.handler(t, sse(stopEvent)))
	defer srv.Close()
	m := New(Options{BaseURL: srv.URL + "/", APIKey: "key-test", Model: "default", HTTPClient: srv.Client(),
		Headers: map[string]string{"X-Title": "massgen"}})
	if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if got.path != "/v1beta/models/gemini-2.5-pro:streamGenerateContent" || got.query != "alt=sse" {
		t.Errorf("request %s?%s", got.path, got.query)
	}
	if k := got.header.Get("X-Goog-Api-Key"); k != "key-test" {
		t.Errorf("x-goog-api-key = %q", k)
	}
	if v := got.header.Get("X-Title"); v != "massgen" {
		t.Errorf("X-Title = %q", v)
	}
}

func TestEnvironmentDoesNotLeak(t *testing.T) {
	// Everything the SDK would read from the environment.
	t.Setenv("GOOGLE_API_KEY", "env-google-key")
	t.Setenv("GEMINI_API_KEY", "env-gemini-key")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_GENAI_USE_ENTERPRISE", "true")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:1")
	tests := []struct {
		name    string
		key     string
		wantKey []string
	}{
		{"no key sends none", "", nil},
		{"the given key wins", "mine", []string{"mine"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got capture
			srv := httptest.NewServer(got.handler(t, sse(stopEvent)))
			defer srv.Close()
			defer llm.HTTPClient.CloseIdleConnections()
			m := New(Options{BaseURL: srv.URL, APIKey: tt.key, Model: "fallback"}) // the shared default client
			if _, err := llmtest.Collect(m.Stream(t.Context(), hello)); err != nil {
				t.Fatal(err)
			}
			if got.path != "/v1beta/models/fallback:streamGenerateContent" {
				t.Errorf("path = %q: want the Gemini API path with the default model", got.path)
			}
			if diff := cmp.Diff(tt.wantKey, got.header.Values("X-Goog-Api-Key")); diff != "" {
				t.Errorf("x-goog-api-key (-want +got):\n%s", diff)
			}
			if a := got.header.Values("Authorization"); len(a) != 0 {
				t.Errorf("Authorization sent: %q", a)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name, base, want string
	}{
		{"default is the public endpoint", "", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"a trailing version is the API version", "https://proxy.example/v1beta/", "https://proxy.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"v1 can be chosen", "https://generativelanguage.googleapis.com/v1", "https://generativelanguage.googleapis.com/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"a path prefix is kept", "https://gw.example/google/v1alpha", "https://gw.example/google/v1alpha/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"a prefix without a version gets v1beta", "https://gw.example/google", "https://gw.example/google/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.URL.String()
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
					Body: io.NopCloser(strings.NewReader(sse(stopEvent))), Request: r}, nil
			})}
			m := New(Options{BaseURL: tt.base, APIKey: "k", Model: "gemini-2.5-flash", HTTPClient: hc})
			if _, err := llmtest.Collect(m.Stream(t.Context(), hello)); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("request URL = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParams(t *testing.T) {
	weather := llm.ToolDef{Name: "weather", Parameters: map[string]any{"type": "object"}}
	fnTools := map[string]any{"functionDeclarations": []any{map[string]any{"name": "weather", "parametersJsonSchema": map[string]any{"type": "object"}}}}
	tests := []struct {
		name   string
		params map[string]any
		tools  []llm.ToolDef
		want   map[string]any // body keys other than contents
	}{
		{
			name:   "no params, an empty config",
			params: nil,
			want:   map[string]any{"generationConfig": map[string]any{}},
		},
		{
			name: "structured output from a YAML-shaped schema",
			params: map[string]any{"response_schema": map[any]any{
				"type":       "object",
				"properties": map[any]any{"action_type": map[any]any{"type": "string", "enum": []any{"vote", "new_answer"}}},
			}},
			want: map[string]any{"generationConfig": map[string]any{
				"responseMimeType": "application/json",
				"responseJsonSchema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"action_type": map[string]any{"type": "string", "enum": []any{"vote", "new_answer"}}},
				},
			}},
		},
		{
			name:   "flat thinking keys, level upper-cased",
			params: map[string]any{"thinking_level": "high", "include_thoughts": true},
			want: map[string]any{"generationConfig": map[string]any{
				"thinkingConfig": map[string]any{"thinkingLevel": "HIGH", "includeThoughts": true},
			}},
		},
		{
			name:   "camel-case thinking_config, flat key wins",
			params: map[string]any{"thinking_config": map[string]any{"thinkingBudget": 0, "includeThoughts": true}, "thinking_budget": -1},
			want: map[string]any{"generationConfig": map[string]any{
				"thinkingConfig": map[string]any{"thinkingBudget": float64(-1), "includeThoughts": true},
			}},
		},
		{
			name:   "max_output_tokens wins over max_tokens, penalties pass",
			params: map[string]any{"max_tokens": 10, "max_output_tokens": 20.0, "presence_penalty": 0.5, "frequency_penalty": -0.5, "stop_sequences": []any{"a", "b"}},
			want: map[string]any{"generationConfig": map[string]any{
				"maxOutputTokens": float64(20), "presencePenalty": 0.5, "frequencyPenalty": -0.5, "stopSequences": []any{"a", "b"},
			}},
		},
		{
			name:   "built-in tools after the function tools",
			params: map[string]any{"enable_web_search": true, "enable_code_execution": true},
			tools:  []llm.ToolDef{weather},
			want: map[string]any{"generationConfig": map[string]any{}, "tools": []any{
				fnTools,
				map[string]any{"googleSearch": map[string]any{}},
				map[string]any{"codeExecution": map[string]any{}},
			}},
		},
		{
			name:   "built-in tools switched off",
			params: map[string]any{"enable_web_search": false},
			want:   map[string]any{"generationConfig": map[string]any{}},
		},
		{
			name: "extra_body is merged into the body",
			params: map[string]any{"temperature": 1, "extra_body": map[string]any{
				"generationConfig": map[string]any{"candidateCount": 1},
				"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
			}},
			want: map[string]any{
				"generationConfig": map[string]any{"temperature": float64(1), "candidateCount": float64(1)},
				"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got capture
			m := newModel(t, got.handler(t, sse(stopEvent)))
			req := &llm.Request{Messages: hello.Messages, Tools: tt.tools, Params: tt.params}
			if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			delete(got.body, "contents")
			if diff := cmp.Diff(tt.want, got.body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidRequestIsFinal(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: "[1,2]"}}}
	tests := []struct {
		name    string
		req     *llm.Request
		wantMsg string
	}{
		{"unknown role", &llm.Request{Messages: []llm.Message{{Role: "narrator", Content: "x"}}}, `message 0: unsupported role "narrator"`},
		{"tool result without its call", &llm.Request{Messages: []llm.Message{{Role: llm.RoleTool, ToolCallID: "c9", Content: "x"}}}, `tool result for call "c9"`},
		{"arguments that are not an object", &llm.Request{Messages: []llm.Message{call}}, "tool call c1 (f): arguments are not a JSON object"},
		{"temperature of the wrong type", &llm.Request{Messages: hello.Messages, Params: map[string]any{"temperature": "hot"}}, "parameter temperature: want a number, got string"},
		{"fractional token limit", &llm.Request{Messages: hello.Messages, Params: map[string]any{"max_tokens": 1.5}}, "parameter max_tokens: want a whole number"},
		{"thinking_config not a map", &llm.Request{Messages: hello.Messages, Params: map[string]any{"thinking_config": "on"}}, "parameter thinking_config: want a map"},
		{"switch that is not a bool", &llm.Request{Messages: hello.Messages, Params: map[string]any{"enable_web_search": "yes"}}, "parameter enable_web_search: want true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{BaseURL: "http://127.0.0.1:1", Model: "gemini-2.5-flash"})
			_, err := llmtest.Collect(m.Stream(t.Context(), tt.req))
			e, ok := err.(*llm.Error)
			if !ok || e.Retry || e.Status != 0 || !strings.HasPrefix(e.Message, "invalid request: ") || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %v, want a final *llm.Error containing %q", err, tt.wantMsg)
			}
		})
	}
}

func TestModelsShareNothingButTheSDK(t *testing.T) {
	// Every model rides the one SDK client; concurrent requests must each
	// reach their own endpoint with their own key.
	type seen struct{ key, path string }
	const n = 8
	results := make(chan seen, 2*n)
	var models []llm.Model
	for i, key := range []string{"key-a", "key-b"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			results <- seen{r.Header.Get("X-Goog-Api-Key") + "@" + string(rune('a'+i)), r.URL.Path}
			serveSSE(sse(stopEvent))(w, r)
		}))
		t.Cleanup(srv.Close)
		models = append(models, New(Options{BaseURL: srv.URL, APIKey: key, Model: "m-" + key, HTTPClient: srv.Client()}))
	}
	errs := make(chan error, 2*n)
	for range n {
		for _, m := range models {
			go func() {
				_, err := llmtest.Collect(m.Stream(t.Context(), hello))
				errs <- err
			}()
		}
	}
	for range 2 * n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(results)
	count := map[seen]int{}
	for s := range results {
		count[s]++
	}
	want := map[seen]int{
		{"key-a@a", "/v1beta/models/m-key-a:streamGenerateContent"}: n,
		{"key-b@b", "/v1beta/models/m-key-b:streamGenerateContent"}: n,
	}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("requests seen (-want +got):\n%s", diff)
	}
}
