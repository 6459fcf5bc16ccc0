package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/massgen/massgen/internal/redact"
)

// This file holds what the provider adapters share when they turn an HTTP
// or transport failure into an *Error: reading retry headers and error
// bodies, and telling "the server is unreachable" from other failures.

// MaxMessageLen bounds, in bytes, an error message taken from a response
// body, so a proxy's HTML error page does not flood the log.
const MaxMessageLen = 500

// ClipMessage masks secrets in s (see package redact: a body may echo the
// key it was sent), then cuts it to MaxMessageLen bytes (without splitting
// a UTF-8 sequence) and marks the cut with "…". Masking comes first so a
// cut cannot leave half a key that no longer matches.
func ClipMessage(s string) string {
	s = redact.String(s)
	if len(s) <= MaxMessageLen {
		return s
	}
	return strings.ToValidUTF8(s[:MaxMessageLen], "") + "…"
}

// RetryAfter reads the wait a provider asked for: Retry-After-Ms (OpenAI's
// finer header) first, then Retry-After (see ParseRetryAfter). It is 0 when
// neither gives a usable wait.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return ParseRetryAfter(h.Get("Retry-After"), now)
}

// ParseRetryAfter reads a Retry-After value, in seconds or as an HTTP date
// (relative to now); it is 0 for an empty, past, negative or unreadable one.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ErrorBodyMessage extracts the provider's message from an error response
// body: {"error":{"message":…}}, {"error":"…"}, {"message":…},
// {"detail":"…"} or plain text, clipped by ClipMessage.
func ErrorBodyMessage(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &doc) == nil {
		if msg := ErrorMemberMessage(doc.Error); msg != "" {
			return msg
		}
		if doc.Message != "" {
			return ClipMessage(doc.Message)
		}
		if doc.Detail != "" {
			return ClipMessage(doc.Detail)
		}
	}
	return ClipMessage(strings.TrimSpace(string(body)))
}

// ErrorMemberMessage reads the "error" member of an error body or event,
// a string or an object with a "message", clipped by ClipMessage; it is ""
// when raw is neither.
func ErrorMemberMessage(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ClipMessage(s)
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return ClipMessage(obj.Message)
	}
	return ""
}

// IsTransportError reports whether err comes from the transport (the
// request did not get a response: connection refused, DNS failure,
// timeout) rather than from the server.
func IsTransportError(err error) bool {
	if _, ok := errors.AsType[*url.Error](err); ok {
		return true
	}
	_, ok := errors.AsType[net.Error](err)
	return ok
}

// ShortCause reduces a transport or read error to its root ("connection
// refused", "no such host") instead of the nested "Post \"…\": dial tcp …"
// chain.
func ShortCause(err error) string {
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok {
		return "lookup " + dnsErr.Name + ": " + dnsErr.Err
	}
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		return errno.Error()
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "connection closed by the server"
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// Unreachable is the retryable error for a request that never reached the
// server at baseURL: "cannot reach <baseURL>: <ShortCause(err)>".
func Unreachable(provider, model, baseURL string, err error) *Error {
	return &Error{
		Provider: provider,
		Model:    model,
		Retry:    true,
		Message:  fmt.Sprintf("cannot reach %s: %s", baseURL, ShortCause(err)),
		Err:      err,
	}
}

// RequestFailed is the error for a request that got no HTTP response:
// Unreachable for a transport error, else a final error with err's text
// (a request the SDK refused to build or send).
func RequestFailed(provider, model, baseURL string, err error) *Error {
	if IsTransportError(err) {
		return Unreachable(provider, model, baseURL, err)
	}
	return &Error{Provider: provider, Model: model, Message: err.Error(), Err: err}
}

// ResponseRetryAfter is RetryAfter of resp's header, 0 for a nil resp.
func ResponseRetryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	return RetryAfter(resp.Header, time.Now())
}

// StreamInterrupted is the retryable error for a stream cut after a 2xx
// response started: "stream interrupted: <ShortCause(err)>".
func StreamInterrupted(provider, model string, err error) *Error {
	return &Error{Provider: provider, Model: model, Retry: true, Message: "stream interrupted: " + ShortCause(err), Err: err}
}

// StatusError is the error for an HTTP error status: message, or the
// status text when it is empty, retryable as RetryableStatus says, with
// the wait the provider asked for (after, 0 when none).
func StatusError(provider, model string, status int, message string, after time.Duration, err error) *Error {
	if message == "" {
		message = http.StatusText(status)
	}
	return &Error{
		Provider: provider,
		Model:    model,
		Status:   status,
		Retry:    RetryableStatus(status),
		After:    after,
		Message:  message,
		Err:      err,
	}
}

// Canceled keeps a cancellation a context error, not a provider failure
// (callers test errors.Is(err, context.Canceled) to tell "stopped" from
// "broken"), saying which adapter stopped.
func Canceled(adapter string, ctxErr error) error {
	return fmt.Errorf("%s: request stopped: %w", adapter, ctxErr)
}
