package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sse renders events as the Responses API sends them: an `event:` line
// naming the type, then the data.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &ev)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Type, e)
	}
	return b.String()
}

func serveSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

// Event builders for hand-written streams.
func textDelta(item, s string) string {
	return fmt.Sprintf(`{"type":"response.output_text.delta","item_id":%q,"output_index":0,"content_index":0,"delta":%q}`, item, s)
}

func completed(output, usage string) string {
	return fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","output":[%s],"usage":%s}}`, output, usage)
}

const smallUsage = `{"input_tokens":5,"output_tokens":2,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7}`

// okStream is a minimal complete answer.
var okStream = sse(textDelta("msg_1", "ok"), completed("", smallUsage))

func newModel(t *testing.T, h http.Handler) llm.Model {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(Options{Provider: "test", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "m1", HTTPClient: srv.Client()})
}

var hello = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// recorder is a server that answers every request with okStream (or
// what answer returns) and keeps the request bodies.
type recorder struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	answer  func(w http.ResponseWriter, body map[string]any) // optional
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, body)
	rec.headers = append(rec.headers, r.Header)
	rec.mu.Unlock()
	if rec.answer != nil {
		rec.answer(w, body)
		return
	}
	serveSSE(okStream)(w, r)
}

func (rec *recorder) last() map[string]any {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.bodies[len(rec.bodies)-1]
}

func TestRequestBodySent(t *testing.T) {
	req := &llm.Request{
		Model: "gpt-4.1",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "weather in Rome and Paris?"},
			{Role: llm.RoleAssistant, Content: "Checking.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "weather", Arguments: `{"location":"Rome"}`},
				{ID: "call_2", Name: "weather", Arguments: `{"location":"Paris"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "40 C"},
			{Role: llm.RoleTool, ToolCallID: "call_2", Content: "30 C"},
			{Role: llm.RoleAssistant, Content: "Hot in both."},
			{Role: llm.RoleAssistant}, // empty: sends nothing
			{Role: "developer", Content: "answer in English"},
			{Role: llm.RoleUser, Content: "thanks"},
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
			"temperature":          0.2,
			"top_p":                0.9,
			"max_tokens":           100,
			"text":                 map[string]any{"verbosity": "low"},
			"tool_choice":          "auto",
			"metadata":             map[string]any{"run": "x"},
			"extra_body":           map[string]any{"top_p": 0.5, "service_tier": "flex"},
			"parallel_tool_calls":  nil,   // null: sent as nothing
			"stream":               false, // owned by the adapter: dropped
			"store":                true,  // never: the adapter keeps no server state
			"previous_response_id": "resp_old",
			"input":                "x",
		},
	}
	want := map[string]any{
		"model":        "gpt-4.1",
		"stream":       true,
		"store":        false,
		"instructions": "be brief\n\nanswer in English",
		"input": []any{
			map[string]any{"role": "user", "content": "weather in Rome and Paris?"},
			map[string]any{"role": "assistant", "content": "Checking."},
			map[string]any{"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": `{"location":"Rome"}`},
			map[string]any{"type": "function_call", "call_id": "call_2", "name": "weather", "arguments": `{"location":"Paris"}`},
			map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "40 C"},
			map[string]any{"type": "function_call_output", "call_id": "call_2", "output": "30 C"},
			map[string]any{"role": "assistant", "content": "Hot in both."},
			map[string]any{"role": "user", "content": "thanks"},
		},
		"tools": []any{
			map[string]any{
				"type": "function", "name": "weather", "description": "Get weather", "strict": false,
				"parameters": map[string]any{
					"type":       "object",
					"properties": map[string]any{"location": map[string]any{"type": "string"}},
					"required":   []any{"location"},
				},
			},
			map[string]any{
				"type": "function", "name": "noargs", "strict": false,
				"parameters": map[string]any{"type": "object", "properties": map[string]any{}},
			},
		},
		"temperature":       0.2,
		"top_p":             0.5,
		"max_output_tokens": float64(100),
		"text":              map[string]any{"verbosity": "low"},
		"tool_choice":       "auto",
		"metadata":          map[string]any{"run": "x"},
		"service_tier":      "flex",
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	m := New(Options{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "default",
		HTTPClient: srv.Client(), Headers: map[string]string{"OpenAI-Organization": "org-1"}})
	if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rec.last()); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	h := rec.headers[0]
	if got := h.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("OpenAI-Organization"); got != "org-1" {
		t.Errorf("OpenAI-Organization = %q", got)
	}
}

func TestOutputLimitIsRenamed(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   any
	}{
		{"max_tokens", map[string]any{"max_tokens": 10}, float64(10)},
		{"max_completion_tokens", map[string]any{"max_completion_tokens": 20}, float64(20)},
		{"max_output_tokens", map[string]any{"max_output_tokens": 30}, float64(30)},
		{"the Responses name wins", map[string]any{"max_tokens": 10, "max_output_tokens": 30}, float64(30)},
		{"inside extra_body", map[string]any{"extra_body": map[string]any{"max_tokens": 40}}, float64(40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			m := newModel(t, rec)
			req := &llm.Request{Messages: hello.Messages, Params: tt.params}
			if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			body := rec.last()
			if body["max_output_tokens"] != tt.want {
				t.Errorf("max_output_tokens = %v, want %v", body["max_output_tokens"], tt.want)
			}
			for _, k := range []string{"max_tokens", "max_completion_tokens"} {
				if _, ok := body[k]; ok {
					t.Errorf("%s sent to the Responses API", k)
				}
			}
		})
	}
}

func TestReasoningDefaults(t *testing.T) {
	summary := map[string]any{"summary": "auto"}
	medium := map[string]any{"effort": "medium", "summary": "auto"}
	tests := []struct {
		model  string
		params map[string]any
		want   any // the reasoning object sent; nil for none
	}{
		{model: "gpt-5", want: summary},
		{model: "gpt-5-mini", want: summary},
		{model: "gpt-5-codex", want: summary},
		{model: "gpt-5.1", want: medium},
		{model: "gpt-5.1-codex-mini", want: medium},
		{model: "gpt-5.2", want: medium},
		{model: "GPT-5.2-pro", want: medium},
		{model: "o1", want: summary},
		{model: "o3", want: summary},
		{model: "o3-mini", want: summary},
		{model: "o4-mini", want: summary},
		{model: "gpt-5-chat-latest"},
		{model: "gpt-5.1-chat-latest"},
		{model: "o1-mini"},
		{model: "gpt-4o"},
		{model: "gpt-4.1-mini"},
		{
			model:  "gpt-5.1",
			params: map[string]any{"reasoning": map[string]any{"effort": "high"}},
			want:   map[string]any{"effort": "high"}, // configured: verbatim
		},
		{
			model:  "gpt-5",
			params: map[string]any{"reasoning": map[string]any{"effort": "minimal", "summary": "detailed"}},
			want:   map[string]any{"effort": "minimal", "summary": "detailed"},
		},
		{model: "gpt-5", params: map[string]any{"reasoning": nil}}, // null: none at all
		{
			model:  "o3",
			params: map[string]any{"extra_body": map[string]any{"reasoning": map[string]any{"effort": "low"}}},
			want:   map[string]any{"effort": "low"},
		},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.model, tt.params), func(t *testing.T) {
			rec := &recorder{}
			m := newModel(t, rec)
			req := &llm.Request{Model: tt.model, Messages: hello.Messages, Params: tt.params}
			if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			got, sent := rec.last()["reasoning"]
			if tt.want == nil {
				if sent {
					t.Errorf("reasoning = %v, want none", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasoning (-want +got):\n%s", diff)
			}
		})
	}
}

// refuse answers 400 to a request whose reasoning carries key, as OpenAI
// answers an organisation that may not use it.
func refuse(key, param, message string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, body map[string]any) {
		if r, ok := body["reasoning"].(map[string]any); ok && r[key] != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":%q,"code":"unsupported_value"}}`, message, param)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okStream)
	}
}

const unverified = "Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization."

func TestRefusedDefaultReasoningIsDropped(t *testing.T) {
	tests := []struct {
		name     string
		model    string
		params   map[string]any
		answer   func(http.ResponseWriter, map[string]any)
		wantSent []any  // reasoning of each request, first call then second
		wantErr  string // the final 400 expected on the first call, if any
	}{
		{
			name:   "unverified organisation gets no summaries",
			model:  "gpt-5",
			answer: refuse("summary", "reasoning.summary", unverified),
			// first call: refused, resent without; second call: without at once
			wantSent: []any{map[string]any{"summary": "auto"}, nil, nil},
		},
		{
			name:     "the effort default survives a refused summary",
			model:    "gpt-5.1",
			answer:   refuse("summary", "reasoning.summary", unverified),
			wantSent: []any{map[string]any{"effort": "medium", "summary": "auto"}, map[string]any{"effort": "medium"}, map[string]any{"effort": "medium"}},
		},
		{
			name:   "a refused effort drops the defaults",
			model:  "gpt-5.2-future",
			answer: refuse("effort", "reasoning.effort", "Unsupported value: 'medium'"),
			wantSent: []any{
				map[string]any{"effort": "medium", "summary": "auto"},
				nil, nil,
			},
		},
		{
			name:     "a summary refusal that names no parameter is still recognised",
			model:    "o3",
			answer:   refuse("summary", "", unverified),
			wantSent: []any{map[string]any{"summary": "auto"}, nil, nil},
		},
		{
			name:  "an unrelated refusal keeps the defaults",
			model: "gpt-5",
			answer: func(w http.ResponseWriter, body map[string]any) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with reasoning models.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`)
			},
			wantSent: []any{map[string]any{"summary": "auto"}},
			wantErr:  "temperature",
		},
		{
			name:     "configured reasoning is the user's: the error is reported",
			model:    "gpt-5",
			params:   map[string]any{"reasoning": map[string]any{"effort": "high", "summary": "auto"}},
			answer:   refuse("summary", "reasoning.summary", unverified),
			wantSent: []any{map[string]any{"effort": "high", "summary": "auto"}},
			wantErr:  "verified",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: tt.answer}
			m := newModel(t, rec)
			req := &llm.Request{Model: tt.model, Messages: hello.Messages, Params: tt.params}
			for range 2 {
				_, err := llmtest.Collect(m.Stream(t.Context(), req))
				if tt.wantErr != "" {
					e, ok := errors.AsType[*llm.Error](err)
					if !ok || e.Status != 400 || e.Retry || !strings.Contains(e.Message, tt.wantErr) {
						t.Fatalf("error = %v, want the final 400", err)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			var sent []any
			for _, b := range rec.bodies {
				sent = append(sent, b["reasoning"])
			}
			if diff := cmp.Diff(tt.wantSent, sent); diff != "" {
				t.Errorf("reasoning per request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvironmentIsNotRead(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/must-not-be-used")
	t.Setenv("OPENAI_ORG_ID", "org-leak")
	t.Setenv("OPENAI_PROJECT_ID", "proj-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	defer llm.HTTPClient.CloseIdleConnections()
	m := New(Options{BaseURL: srv.URL, Model: "fallback"})
	if _, err := llmtest.Collect(m.Stream(t.Context(), hello)); err != nil {
		t.Fatal(err)
	}
	if got := rec.last()["model"]; got != "fallback" {
		t.Errorf("model = %v, want the default from Options", got)
	}
	h := rec.headers[0]
	for _, k := range []string{"Authorization", "OpenAI-Organization", "OpenAI-Project", "X-Leak"} {
		if got := h.Values(k); len(got) != 0 {
			t.Errorf("%s sent from the environment: %q", k, got)
		}
	}
}

func TestInvalidRequestIsNotRetryable(t *testing.T) {
	tests := []struct {
		name string
		msg  llm.Message
		want string
	}{
		{"unknown role", llm.Message{Role: "narrator", Content: "x"}, `message 0: unsupported role "narrator"`},
		{"tool result without call id", llm.Message{Role: llm.RoleTool, Content: "x"}, "message 0: tool result without a tool call id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{BaseURL: "http://127.0.0.1:1"})
			_, err := llmtest.Collect(m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{tt.msg}}))
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || e.Retry || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("error = %v, want a final *llm.Error containing %q", err, tt.want)
			}
		})
	}
}

// A tool result with pictures goes out as the Responses API's array
// output: input_text, then input_image with a data URL.
func TestToolImagesAreSentAsInputImages(t *testing.T) {
	req := &llm.Request{
		Model: "gpt-4.1",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "what is on screen?"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "shot", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "[image: image/png, 4 bytes]",
				Images: []llm.Image{{MIME: "image/png", Data: []byte("\x89PNG")}}},
		},
	}
	want := []any{
		map[string]any{"role": "user", "content": "what is on screen?"},
		map[string]any{"type": "function_call", "call_id": "call_1", "name": "shot", "arguments": `{}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": []any{
			map[string]any{"type": "input_text", "text": "[image: image/png, 4 bytes]"},
			map[string]any{"type": "input_image", "image_url": "data:image/png;base64,iVBORw=="},
		}},
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	m := New(Options{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "default", HTTPClient: srv.Client()})
	if _, err := llmtest.Collect(m.Stream(t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rec.last()["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}
