package anthropic

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func anthropicError(typ, msg string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_1"}`
}

func TestErrorStatusMapping(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   llm.Error
	}{
		{
			name:   "400 invalid request is final",
			status: 400,
			body:   anthropicError("invalid_request_error", "max_tokens: Field required"),
			want:   llm.Error{Status: 400, Message: "max_tokens: Field required"},
		},
		{
			name:   "401 bad key is final",
			status: 401,
			body:   anthropicError("authentication_error", "invalid x-api-key"),
			want:   llm.Error{Status: 401, Message: "invalid x-api-key"},
		},
		{
			name:   "403 permission is final",
			status: 403,
			body:   anthropicError("permission_error", "not allowed"),
			want:   llm.Error{Status: 403, Message: "not allowed"},
		},
		{
			name:   "429 is retried after the seconds asked for",
			status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
			want:   llm.Error{Status: 429, Retry: true, After: 7 * time.Second, Message: "Number of request tokens has exceeded your per-minute rate limit"},
		},
		{
			name:   "500 is retryable",
			status: 500,
			body:   anthropicError("api_error", "Internal server error"),
			want:   llm.Error{Status: 500, Retry: true, Message: "Internal server error"},
		},
		{
			name:   "529 overloaded is retryable",
			status: 529,
			body:   anthropicError("overloaded_error", "Overloaded"),
			want:   llm.Error{Status: 529, Retry: true, Message: "Overloaded"},
		},
		{
			name:   "x-should-retry false overrides the status",
			status: 500,
			header: map[string]string{"X-Should-Retry": "false"},
			body:   anthropicError("api_error", "do not bother"),
			want:   llm.Error{Status: 500, Message: "do not bother"},
		},
		{
			name:   "x-should-retry true overrides the status",
			status: 400,
			header: map[string]string{"X-Should-Retry": "true"},
			body:   anthropicError("invalid_request_error", "try again"),
			want:   llm.Error{Status: 400, Retry: true, Message: "try again"},
		},
		{
			name:   "503 plain text body becomes the message",
			status: 503,
			body:   "upstream connect error\n",
			want:   llm.Error{Status: 503, Retry: true, Message: "upstream connect error"},
		},
		{
			name:   "error as a bare string",
			status: 404,
			body:   `{"error":"model 'nope' not found"}`,
			want:   llm.Error{Status: 404, Message: "model 'nope' not found"},
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
	base := "http://" + ln.Addr().String()
	_ = ln.Close()
	m := New(Options{BaseURL: base, Model: "m", HTTPClient: &http.Client{}})
	_, err = llmtest.Collect(m.Stream(t.Context(), hello))
	e := llmtest.RequireLLMError(t, err)
	want := "cannot reach " + base + ": connection refused"
	if e.Status != 0 || !e.Retry || e.Message != want || e.Provider != "claude" {
		t.Errorf("got Provider=%q Status=%d Retry=%v Message=%q, want claude, 0, true, %q", e.Provider, e.Status, e.Retry, e.Message, want)
	}
}

func TestErrorBodyMessage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"error object", `{"error":{"message":"bad key","type":"x"}}`, "bad key"},
		{"error string", `{"error":"no such model"}`, "no such model"},
		{"message only", `{"message":"too long"}`, "too long"},
		{"plain text", "  Service Unavailable \n", "Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodyMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("bodyMessage = %q, want %q", got, tt.want)
			}
		})
	}
}
