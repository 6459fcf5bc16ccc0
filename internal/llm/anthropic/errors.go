package anthropic

import (
	"context"
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

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/massgen/massgen/internal/llm"
)

// maxMessage bounds an error message taken from a response body, so a
// proxy's HTML error page does not flood the log.
const maxMessage = 500

// statusOverloaded is Anthropic's own "overloaded" status.
const statusOverloaded = 529

// errorTypeStatus gives the HTTP status Anthropic pairs with each error
// type, for errors that arrive as an event inside a 200 stream.
var errorTypeStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      statusOverloaded,
}

// requestError classifies a failure of the request itself (no successful
// response): cancellation, an HTTP error status, or a transport error.
func (m *model) requestError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	e := &llm.Error{Provider: m.provider, Model: model, Err: err}
	apiErr, ok := errors.AsType[*anthropic.Error](err)
	switch {
	case ok:
		e.Status = apiErr.StatusCode
		e.Message = truncate(apiErr.Message)
		if e.Message == "" {
			e.Message = bodyMessage([]byte(apiErr.RawJSON()))
		}
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
		e.Retry = llm.RetryableStatus(e.Status)
		if apiErr.Response != nil {
			e.After = retryAfter(apiErr.Response.Header, time.Now())
			// Anthropic says outright whether a retry can help.
			switch apiErr.Response.Header.Get("X-Should-Retry") {
			case "true":
				e.Retry = true
			case "false":
				e.Retry = false
			}
		}
	case isTransport(err):
		e.Retry = true
		e.Message = fmt.Sprintf("cannot reach %s: %s", m.baseURL, shortCause(err))
	default:
		e.Message = err.Error()
	}
	return e
}

// streamError classifies a failure after a 2xx response started: an error
// event (overloaded, rate limited, internal), a cut connection or a garbled
// event. Asking again may well succeed.
func (m *model) streamError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	e := &llm.Error{Provider: m.provider, Model: model, Retry: true, Err: err}
	if apiErr, ok := errors.AsType[*anthropic.Error](err); ok {
		// The SDK gives the event the status of the response it came in
		// (200); the error type says what really happened.
		typ := string(apiErr.Type())
		e.Status = errorTypeStatus[typ]
		msg := truncate(apiErr.Message)
		if msg == "" {
			msg = truncate(strings.TrimSpace(apiErr.RawJSON()))
		}
		if typ != "" {
			msg = typ + ": " + msg
		}
		e.Message = "error event in stream: " + msg
		return e
	}
	if msg, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok {
		// An error event whose data is not Anthropic's error JSON.
		e.Message = "error event in stream: " + truncate(msg)
		return e
	}
	e.Message = "stream interrupted: " + shortCause(err)
	return e
}

// canceled keeps cancellation a context error, not a provider failure:
// callers test errors.Is(err, context.Canceled) to tell "stopped" from
// "broken".
func canceled(ctxErr error) error {
	return fmt.Errorf("anthropic: request stopped: %w", ctxErr)
}

func isTransport(err error) bool {
	if _, ok := errors.AsType[*url.Error](err); ok {
		return true
	}
	_, ok := errors.AsType[net.Error](err)
	return ok
}

// shortCause reduces a transport error to its root ("connection refused",
// "no such host") instead of the nested "Post \"…\": dial tcp …" chain.
func shortCause(err error) string {
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

// bodyMessage extracts the message from an error body that is not
// Anthropic's {"type":"error","error":{…}}: {"error":"…"}, {"message":…}
// or plain text (a proxy's page).
func bodyMessage(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var s string
		if json.Unmarshal(doc.Error, &s) == nil && s != "" {
			return truncate(s)
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(doc.Error, &obj) == nil && obj.Message != "" {
			return truncate(obj.Message)
		}
		if doc.Message != "" {
			return truncate(doc.Message)
		}
	}
	return truncate(strings.TrimSpace(string(body)))
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}

// retryAfter reads the wait a provider asked for: retry-after-ms first,
// then retry-after in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
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
