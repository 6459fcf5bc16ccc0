package openai

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

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llm"
)

// maxMessage bounds an error message taken from a response body, so a
// proxy's HTML error page does not flood the log.
const maxMessage = 500

// requestError classifies a failure of the request itself (no usable
// response yet): cancellation, an HTTP error status, or a transport error.
// resp is what the wire probe saw.
func (m *model) requestError(ctx context.Context, model string, err error, resp *wireProbe) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	e := &llm.Error{Provider: m.provider, Model: model, Err: err}
	if apiErr, ok := errors.AsType[*responses.Error](err); ok {
		e.Status = apiErr.StatusCode
		e.Message = apiErr.Message
		if e.Message == "" {
			e.Message = bodyMessage(resp.errBody)
		}
		if apiErr.Response != nil {
			e.After = retryAfter(apiErr.Response.Header, time.Now())
		}
	} else if resp.status >= 400 {
		// The SDK only builds an *openai.Error when the body is JSON with an
		// "error" member; a gateway in front of the API may answer with
		// plain text. The probe kept the response for this case.
		e.Status = resp.status
		e.Message = bodyMessage(resp.errBody)
		e.After = retryAfter(resp.header, time.Now())
	} else if isTransport(err) {
		e.Retry = true
		e.Message = fmt.Sprintf("cannot reach %s: %s", m.baseURL, shortCause(err))
		return e
	} else {
		e.Message = err.Error()
		return e
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
	}
	e.Retry = llm.RetryableStatus(e.Status)
	return e
}

// streamError classifies a failure after a 2xx response started: whatever
// went wrong (a cut connection, an error event the SDK recognised by its
// `error` member, a garbled event), asking again may well succeed.
func (m *model) streamError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	e := &llm.Error{Provider: m.provider, Model: model, Retry: true, Err: err}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		// {"type":"error","error":{"code":…,"message":…}}: the SDK stops
		// at any event with an `error` member.
		f := streamErrorEvent(se.Event.Data)
		e.Message = "error event in stream: " + f.describe()
		e.Retry = f.retryable()
	} else {
		e.Message = "stream interrupted: " + shortCause(err)
	}
	return e
}

// eventError turns response.failed or a typed `error` event into an
// *llm.Error.
func (m *model) eventError(model string, f *eventFailure) error {
	prefix := "error event in stream: "
	if f.failed {
		prefix = "response failed: "
	}
	return &llm.Error{Provider: m.provider, Model: model, Retry: f.retryable(), Message: prefix + f.describe()}
}

func (f *eventFailure) describe() string {
	msg := truncate(strings.TrimSpace(f.message))
	switch {
	case msg == "" && f.code == "":
		return "no details given"
	case msg == "":
		return f.code
	case f.code == "":
		return msg
	}
	return msg + " (" + f.code + ")"
}

// retryable says whether a failure reported inside a 200 stream may pass
// on a second try: server errors, rate limits and timeouts may; a refused
// prompt, an invalid image or a too-long context will not. A failure that
// says nothing about its cause counts as transient, like a cut stream.
func (f *eventFailure) retryable() bool {
	if f.code == "" && f.kind == "" {
		return true
	}
	for _, s := range [...]string{f.code, f.kind} {
		for _, transient := range [...]string{"server_error", "rate_limit", "timeout", "overloaded", "unavailable", "internal_error"} {
			if strings.Contains(s, transient) {
				return true
			}
		}
	}
	return false
}

// streamErrorEvent reads an event that carries an `error` member, as an
// object or a bare string.
func streamErrorEvent(data []byte) *eventFailure {
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	f := &eventFailure{}
	if json.Unmarshal(data, &ev) != nil || len(ev.Error) == 0 {
		f.message = string(data)
		return f
	}
	var obj struct {
		Code    any    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(ev.Error, &f.message) == nil {
		return f
	}
	if json.Unmarshal(ev.Error, &obj) == nil {
		f.kind, f.message = obj.Type, obj.Message
		if obj.Code != nil {
			f.code = fmt.Sprint(obj.Code)
		}
		return f
	}
	f.message = string(data)
	return f
}

// canceled keeps cancellation a context error, not a provider failure:
// callers test errors.Is(err, context.Canceled) to tell "stopped" from
// "broken".
func canceled(ctxErr error) error {
	return fmt.Errorf("openai: request stopped: %w", ctxErr)
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

// bodyMessage extracts the provider's message from an error response body:
// {"error":{"message":…}}, {"error":"…"}, {"message":…} or plain text.
func bodyMessage(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &doc) == nil {
		if msg := errorMessage(doc.Error); msg != "" {
			return msg
		}
		if doc.Message != "" {
			return truncate(doc.Message)
		}
		if doc.Detail != "" {
			return truncate(doc.Detail)
		}
	}
	return truncate(strings.TrimSpace(string(body)))
}

func errorMessage(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return truncate(s)
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return truncate(obj.Message)
	}
	return ""
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}

// retryAfter reads the wait a provider asked for: retry-after-ms (OpenAI's
// finer header) first, then retry-after in seconds or as an HTTP date.
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
