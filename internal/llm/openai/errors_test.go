package openai

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func TestErrorStatusMapping(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   llm.Error
	}{
		{
			name:   "400 bad request is final",
			status: 400,
			body:   `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`,
			want:   llm.Error{Status: 400, Message: "Unsupported parameter: 'temperature' is not supported with this model."},
		},
		{
			name:   "401 bad key is final",
			status: 401,
			body:   `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			want:   llm.Error{Status: 401, Message: "Incorrect API key provided"},
		},
		{
			name:   "404 unknown model is final",
			status: 404,
			body:   `{"error":{"message":"The model 'gpt-9' does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`,
			want:   llm.Error{Status: 404, Message: "The model 'gpt-9' does not exist or you do not have access to it."},
		},
		{
			name:   "429 is retried after the seconds asked for",
			status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"error":{"message":"Rate limit reached for gpt-5","type":"tokens","code":"rate_limit_exceeded"}}`,
			want:   llm.Error{Status: 429, Retry: true, After: 7 * time.Second, Message: "Rate limit reached for gpt-5"},
		},
		{
			name:   "429 retry-after-ms wins over retry-after",
			status: 429,
			header: map[string]string{"Retry-After": "7", "Retry-After-Ms": "1500"},
			body:   `{"error":{"message":"slow down"}}`,
			want:   llm.Error{Status: 429, Retry: true, After: 1500 * time.Millisecond, Message: "slow down"},
		},
		{
			name:   "500 is retryable",
			status: 500,
			body:   `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`,
			want:   llm.Error{Status: 500, Retry: true, Message: "The server had an error while processing your request."},
		},
		{
			name:   "529 overloaded is retryable",
			status: 529,
			body:   `{"error":{"message":"Overloaded","type":"overloaded_error"}}`,
			want:   llm.Error{Status: 529, Retry: true, Message: "Overloaded"},
		},
		{
			name:   "503 plain text from a gateway becomes the message",
			status: 503,
			body:   "upstream connect error\n",
			want:   llm.Error{Status: 503, Retry: true, Message: "upstream connect error"},
		},
		{
			name:   "empty body falls back to the status text",
			status: 502,
			want:   llm.Error{Status: 502, Retry: true, Message: "Bad Gateway"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, llmtest.ErrorResponse(tt.status, tt.header, tt.body))
			want := tt.want
			want.Provider, want.Model = "test", "m1"
			llmtest.RequireError(t, m, hello, want)
		})
	}
}

func TestUnreachableBaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close()
	m := New(Options{BaseURL: base, Model: "gpt-5", HTTPClient: &http.Client{}})
	_, err = llmtest.Collect(m.Stream(t.Context(), hello))
	e := llmtest.RequireLLMError(t, err)
	want := "cannot reach " + base + ": connection refused"
	if e.Status != 0 || !e.Retry || e.Message != want || e.Provider != "openai" {
		t.Errorf("got Provider=%q Status=%d Retry=%v Message=%q, want openai, 0, true, %q", e.Provider, e.Status, e.Retry, e.Message, want)
	}
}

func TestEventFailureRetryable(t *testing.T) {
	tests := []struct {
		code, kind string
		want       bool
	}{
		{"", "", true},
		{"server_error", "", true},
		{"rate_limit_exceeded", "", true},
		{"vector_store_timeout", "", true},
		{"", "server_error", true},
		{"", "invalid_request_error", false},
		{"invalid_prompt", "", false},
		{"context_length_exceeded", "invalid_request_error", false},
		{"image_content_policy_violation", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.code+"/"+tt.kind, func(t *testing.T) {
			f := &eventFailure{code: tt.code, kind: tt.kind}
			if got := f.retryable(); got != tt.want {
				t.Errorf("retryable = %v, want %v", got, tt.want)
			}
		})
	}
}
