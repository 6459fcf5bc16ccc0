package chatcompat

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

func TestErrorStatusMapping(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    llm.Error
		wantMsg string
	}{
		{
			name:   "400 bad request is final",
			status: 400,
			body:   `{"error":{"message":"Invalid value for 'model'","type":"invalid_request_error","code":null}}`,
			want:   llm.Error{Status: 400, Message: "Invalid value for 'model'"},
		},
		{
			name:   "401 bad key is final",
			status: 401,
			body:   `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			want:   llm.Error{Status: 401, Message: "Incorrect API key provided"},
		},
		{
			name:   "429 is retried after the seconds asked for",
			status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}`,
			want:   llm.Error{Status: 429, Retry: true, After: 7 * time.Second, Message: "Rate limit reached"},
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
			body:   `{"error":{"message":"The server had an error"}}`,
			want:   llm.Error{Status: 500, Retry: true, Message: "The server had an error"},
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
			name:   "message without error wrapper",
			status: 422,
			body:   `{"message":"max_tokens too large"}`,
			want:   llm.Error{Status: 422, Message: "max_tokens too large"},
		},
		{
			name:   "empty body falls back to the status text",
			status: 502,
			want:   llm.Error{Status: 502, Retry: true, Message: "Bad Gateway"},
		},
	}
	for _, stream := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				m := newModel(t, llmtest.ErrorResponse(tt.status, tt.header, tt.body), stream)
				want := tt.want
				want.Provider, want.Model = "test", "m1"
				llmtest.RequireError(t, m, hello, want)
			})
		}
	}
}

func TestUnreachableBaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close()
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			m := New(Options{Provider: "vllm", BaseURL: base, Model: "m", Stream: stream, HTTPClient: &http.Client{}})
			_, err := llmtest.Collect(m.Stream(t.Context(), hello))
			e := llmtest.RequireLLMError(t, err)
			want := "cannot reach " + base + ": connection refused"
			if e.Status != 0 || !e.Retry || e.Message != want {
				t.Errorf("got Status=%d Retry=%v Message=%q, want 0, true, %q", e.Status, e.Retry, e.Message, want)
			}
		})
	}
}

func TestInvalidRequestIsNotRetryable(t *testing.T) {
	m := New(Options{BaseURL: "http://127.0.0.1:1", Stream: true})
	_, err := llmtest.Collect(m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{{Role: "narrator", Content: "x"}}}))
	e, ok := errors.AsType[*llm.Error](err)
	if !ok || e.Retry || !strings.Contains(e.Message, `unsupported role "narrator"`) {
		t.Fatalf("error = %v, want a final *llm.Error about the role", err)
	}
}

func TestNonStreamingGarbledBodyIsRetryable(t *testing.T) {
	m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":`)
	}), false)
	_, err := llmtest.Collect(m.Stream(t.Context(), hello))
	if e, ok := errors.AsType[*llm.Error](err); !ok || !e.IsRetryable() || !strings.HasPrefix(e.Message, "unreadable response: ") {
		t.Fatalf("error = %v, want a retryable *llm.Error about the response", err)
	}
}
