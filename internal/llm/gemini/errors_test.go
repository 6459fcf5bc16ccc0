package gemini

import (
	"context"
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
		name   string
		status int
		header map[string]string
		body   string
		want   llm.Error
	}{
		{
			name:   "400 bad key is final",
			status: 400,
			body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
				"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
			want: llm.Error{Status: 400, Message: "API key not valid. Please pass a valid API key."},
		},
		{
			name:   "401 is final",
			status: 401,
			body:   `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`,
			want:   llm.Error{Status: 401, Message: "Request had invalid authentication credentials."},
		},
		{
			name:   "404 unknown model is final",
			status: 404,
			body:   `{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta","status":"NOT_FOUND"}}`,
			want:   llm.Error{Status: 404, Message: "models/gemini-9 is not found for API version v1beta"},
		},
		{
			name:   "429 is retried after the RetryInfo delay",
			status: 429,
			body: `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[
				{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests"}]},
				{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
				{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`,
			want: llm.Error{Status: 429, Retry: true, After: 12 * time.Second, Message: "You exceeded your current quota."},
		},
		{
			name:   "429 with a fractional delay",
			status: 429,
			body:   `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.250s"}]}}`,
			want:   llm.Error{Status: 429, Retry: true, After: 250 * time.Millisecond, Message: "slow down"},
		},
		{
			name:   "429 from a proxy with Retry-After",
			status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
			want:   llm.Error{Status: 429, Retry: true, After: 7 * time.Second, Message: "Resource has been exhausted (e.g. check quota)."},
		},
		{
			name:   "500 is retryable",
			status: 500,
			body:   `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`,
			want:   llm.Error{Status: 500, Retry: true, Message: "An internal error has occurred."},
		},
		{
			name:   "503 overloaded is retryable",
			status: 503,
			body:   `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
			want:   llm.Error{Status: 503, Retry: true, Message: "The model is overloaded. Please try again later."},
		},
		{
			name:   "529 plain-text overload is retryable",
			status: 529,
			body:   "overloaded\n",
			want:   llm.Error{Status: 529, Retry: true, Message: "overloaded"},
		},
		{
			name:   "array-shaped error body",
			status: 400,
			body:   `[{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}]`,
			want:   llm.Error{Status: 400, Message: "Invalid JSON payload received."},
		},
		{
			name:   "a proxy's message without the Google wrapper",
			status: 413,
			body:   `{"message":"request too large"}`,
			want:   llm.Error{Status: 413, Message: "request too large"},
		},
		{
			name:   "message-less error falls back to its status name",
			status: 403,
			body:   `{"error":{"code":403,"status":"PERMISSION_DENIED"}}`,
			want:   llm.Error{Status: 403, Message: "PERMISSION_DENIED"},
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
			want.Provider, want.Model = "test", "gemini-2.5-flash"
			llmtest.RequireError(t, m, hello, want)
		})
	}
}

func TestRetryDelay(t *testing.T) {
	info := func(delay any) []map[string]any {
		return []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}}
	}
	tests := []struct {
		name    string
		details []map[string]any
		want    time.Duration
	}{
		{"none", nil, 0},
		{"duration string", info("12s"), 12 * time.Second},
		{"fractional", info("1.5s"), 1500 * time.Millisecond},
		{"seconds and nanos", info(map[string]any{"seconds": float64(2), "nanos": float64(5e8)}), 2500 * time.Millisecond},
		{"seconds as a string", info(map[string]any{"seconds": "3"}), 3 * time.Second},
		{"garbage", info("soon"), 0},
		{"another detail type", []map[string]any{{"@type": "type.googleapis.com/google.rpc.Help", "retryDelay": "9s"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryDelay(tt.details); got != tt.want {
				t.Errorf("retryDelay = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
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
	m := New(Options{Provider: "gemini", BaseURL: base + "/v1beta", Model: "gemini-2.5-flash", HTTPClient: &http.Client{}})
	_, err = llmtest.Collect(m.Stream(t.Context(), hello))
	e := llmtest.RequireLLMError(t, err)
	want := "cannot reach " + base + "/v1beta: connection refused"
	if e.Status != 0 || !e.Retry || e.Message != want {
		t.Errorf("got Status=%d Retry=%v Message=%q, want 0, true, %q", e.Status, e.Retry, e.Message, want)
	}
}

func TestRetryWrapperRetriesOverload(t *testing.T) {
	// The adapter's errors drive llm.WithRetry: an overload is tried
	// again, and the answer that follows goes through.
	calls := 0
	m := newModel(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls++
		if calls == 1 {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)
			return
		}
		serveSSE(sse(textEvent("ok"), stopEvent))(w, r)
	}))
	var waits []time.Duration
	r := llm.WithRetry(m, llm.RetryPolicy{Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	got, err := llmtest.Collect(r.Stream(t.Context(), hello))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(waits) != 1 || len(got) == 0 || got[0].Text != "ok" {
		t.Errorf("calls=%d waits=%v chunks=%v", calls, waits, got)
	}
}

func TestTruncateLongMessages(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	got := truncate(long)
	if len(got) > maxMessage+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate gave %d bytes: %q", len(got), got)
	}
}
