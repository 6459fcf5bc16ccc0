package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"nil header", nil, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"seconds with spaces", http.Header{"Retry-After": {" 3 "}}, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{"milliseconds only", http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second},
		{"zero milliseconds fall back", http.Header{"Retry-After-Ms": {"0"}, "Retry-After": {"2"}}, 2 * time.Second},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"absurd", http.Header{"Retry-After": {"1e10"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.header, now); got != tt.want {
				t.Errorf("RetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRetryAfterIgnoresMilliseconds(t *testing.T) {
	h := http.Header{"Retry-After-Ms": {"250"}}
	if got := ParseRetryAfter(h.Get("Retry-After"), time.Now()); got != 0 {
		t.Errorf("ParseRetryAfter = %v, want 0", got)
	}
}

func TestResponseRetryAfter(t *testing.T) {
	if got := ResponseRetryAfter(nil); got != 0 {
		t.Errorf("ResponseRetryAfter(nil) = %v, want 0", got)
	}
	resp := &http.Response{Header: http.Header{"Retry-After": {"4"}}}
	if got := ResponseRetryAfter(resp); got != 4*time.Second {
		t.Errorf("ResponseRetryAfter = %v, want 4s", got)
	}
}

func TestErrorBodyMessage(t *testing.T) {
	long := strings.Repeat("x", MaxMessageLen+10)
	tests := []struct {
		name, body, want string
	}{
		{"openai shape", `{"error":{"message":"bad key","type":"x"}}`, "bad key"},
		{"error string", `{"error":"no such model"}`, "no such model"},
		{"empty error string", `{"error":"","message":"fallback"}`, "fallback"},
		{"error object without message", `{"error":{"code":5},"message":"fallback"}`, "fallback"},
		{"message only", `{"message":"too long"}`, "too long"},
		{"fastapi detail", `{"detail":"Not Found"}`, "Not Found"},
		{"plain text", "  Service Unavailable \n", "Service Unavailable"},
		{"empty", "", ""},
		{"long message is clipped", `{"message":"` + long + `"}`, long[:MaxMessageLen] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorBodyMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("ErrorBodyMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorMemberMessage(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"string", `"boom"`, "boom"},
		{"object", `{"message":"boom","code":502}`, "boom"},
		{"object without message", `{"code":502}`, ""},
		{"number", `502`, ""},
		{"absent", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorMemberMessage([]byte(tt.raw)); got != tt.want {
				t.Errorf("ErrorMemberMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClipMessage(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	got := ClipMessage(long)
	if len(got) > MaxMessageLen+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("ClipMessage gave %d bytes: %q", len(got), got)
	}
	if got := ClipMessage(" short "); got != " short " {
		t.Errorf("ClipMessage changed a short message: %q", got)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTransportErrors(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://x/v1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name      string
		err       error
		transport bool
		cause     string
	}{
		{"connection refused", refused, true, "connection refused"},
		{"dns", &url.Error{Op: "Get", URL: "http://nohost", Err: &net.DNSError{Name: "nohost", Err: "no such host"}}, true, "lookup nohost: no such host"},
		{"timeout", &url.Error{Op: "Post", URL: "http://x", Err: timeoutErr{}}, true, "timeout"},
		{"cut connection", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), false, "connection closed by the server"},
		{"eof", io.EOF, false, "connection closed by the server"},
		{"url error", &url.Error{Op: "Post", URL: "http://x", Err: errors.New("tls: bad certificate")}, true, "tls: bad certificate"},
		{"other", errors.New("unsupported role"), false, "unsupported role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTransportError(tt.err); got != tt.transport {
				t.Errorf("IsTransportError = %v, want %v", got, tt.transport)
			}
			if got := ShortCause(tt.err); got != tt.cause {
				t.Errorf("ShortCause = %q, want %q", got, tt.cause)
			}
		})
	}
}

func TestErrorConstructors(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://x/v1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	other := errors.New("bad request body")
	tests := []struct {
		name string
		got  *Error
		want Error
	}{
		{"unreachable", Unreachable("p", "m", "http://x/v1", refused),
			Error{Provider: "p", Model: "m", Retry: true, Message: "cannot reach http://x/v1: connection refused", Err: refused}},
		{"request failed, transport", RequestFailed("p", "m", "http://x/v1", refused),
			Error{Provider: "p", Model: "m", Retry: true, Message: "cannot reach http://x/v1: connection refused", Err: refused}},
		{"request failed, other", RequestFailed("p", "m", "http://x/v1", other),
			Error{Provider: "p", Model: "m", Message: "bad request body", Err: other}},
		{"stream interrupted", StreamInterrupted("p", "m", io.ErrUnexpectedEOF),
			Error{Provider: "p", Model: "m", Retry: true, Message: "stream interrupted: connection closed by the server", Err: io.ErrUnexpectedEOF}},
		{"status with message", StatusError("p", "m", 429, "slow down", 3*time.Second, other),
			Error{Provider: "p", Model: "m", Status: 429, Retry: true, After: 3 * time.Second, Message: "slow down", Err: other}},
		{"status without message", StatusError("p", "m", 400, "", 0, other),
			Error{Provider: "p", Model: "m", Status: 400, Message: "Bad Request", Err: other}},
		{"server error", StatusError("p", "m", 503, "", 0, nil),
			Error{Provider: "p", Model: "m", Status: 503, Retry: true, Message: "Service Unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if *tt.got != tt.want {
				t.Errorf("got %+v, want %+v", *tt.got, tt.want)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	err := Canceled("openai", context.Canceled)
	if !errors.Is(err, context.Canceled) || err.Error() != "openai: request stopped: context canceled" {
		t.Errorf("Canceled = %v", err)
	}
}
