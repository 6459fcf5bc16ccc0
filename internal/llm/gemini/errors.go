package gemini

import (
	"cmp"
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

	"google.golang.org/genai"

	"github.com/massgen/massgen/internal/llm"
)

// maxMessage bounds an error message taken from a response body, so a
// proxy's HTML error page does not flood the log.
const maxMessage = 500

// requestError classifies a failure before a successful response arrived:
// an HTTP error status, a transport error, or a request the SDK refused to
// build. Cancellation has been handled by the caller.
func (m *model) requestError(model string, err error, x *exchange) error {
	e := &llm.Error{Provider: m.provider, Model: model, Err: err}
	apiErr, isAPI := errors.AsType[genai.APIError](err)
	switch {
	case x.status >= 400 || isAPI:
		e.Status = x.status
		g, ok := parseErrorBody(x.errBody)
		switch {
		case ok:
		case x.status >= 400:
			// Not a Google error object: a proxy's page or message.
			g.Message = bodyMessage(x.errBody)
		default:
			// No response was seen (cannot happen with the SDK as it
			// is, but its error still says what went wrong).
			g = googleError{Code: apiErr.Code, Message: apiErr.Message, Details: apiErr.Details}
		}
		if e.Status == 0 {
			e.Status = g.Code
		}
		e.Message = truncate(g.Message)
		if e.Message == "" {
			e.Message = cmp.Or(g.Status, http.StatusText(e.Status))
		}
		e.After = retryDelay(g.Details)
		if e.After == 0 {
			e.After = retryAfter(x.header, time.Now())
		}
		e.Retry = llm.RetryableStatus(e.Status)
	case isTransport(err):
		e.Retry = true
		e.Message = fmt.Sprintf("cannot reach %s: %s", m.baseURL, shortCause(err))
	default:
		// The SDK refused the request before sending it.
		e.Message = err.Error()
	}
	return e
}

// streamError classifies a failure after a 2xx response started: an error
// event, a cut connection, a garbled event. Asking again may well succeed.
func (m *model) streamError(model string, err error, x *exchange) error {
	e := &llm.Error{Provider: m.provider, Model: model, Retry: true, Err: err}
	if apiErr, ok := errors.AsType[genai.APIError](err); ok {
		msg := cmp.Or(apiErr.Message, apiErr.Status, "unknown error")
		e.Message = "error event in stream: " + truncate(msg)
		e.After = retryDelay(apiErr.Details)
		return e
	}
	if x.readErr != nil {
		// The connection broke; the SDK only saw the end of the body, and
		// perhaps a half event.
		e.Err = x.readErr
		e.Message = "stream interrupted: " + shortCause(x.readErr)
		return e
	}
	e.Message = "stream interrupted: " + truncate(err.Error())
	return e
}

// canceled keeps cancellation a context error, not a provider failure:
// callers test errors.Is(err, context.Canceled) to tell "stopped" from
// "broken".
func canceled(ctxErr error) error {
	return fmt.Errorf("gemini: request stopped: %w", ctxErr)
}

// googleError is the error object of Google APIs (google.rpc.Status).
type googleError struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details"`
}

// parseErrorBody reads {"error":{…}}, or the one-element array form some
// Google endpoints answer with.
func parseErrorBody(body []byte) (googleError, bool) {
	var obj struct {
		Error *googleError `json:"error"`
	}
	if json.Unmarshal(body, &obj) == nil && obj.Error != nil {
		return *obj.Error, true
	}
	var arr []struct {
		Error *googleError `json:"error"`
	}
	if json.Unmarshal(body, &arr) == nil && len(arr) > 0 && arr[0].Error != nil {
		return *arr[0].Error, true
	}
	return googleError{}, false
}

// bodyMessage extracts a message from an error body that is not a Google
// error object: a proxy's {"message":…}, {"error":"…"} or plain text.
func bodyMessage(body []byte) string {
	var doc struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &doc) == nil {
		if s, ok := doc.Error.(string); ok && s != "" {
			return truncate(s)
		}
		if doc.Message != "" {
			return truncate(doc.Message)
		}
	}
	return truncate(strings.TrimSpace(string(body)))
}

// retryDelay reads the wait a google.rpc.RetryInfo detail asks for:
// {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}
// (the proto3 JSON form), or {"seconds":12,"nanos":…}.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		switch v := d["retryDelay"].(type) {
		case string:
			if dur, err := time.ParseDuration(v); err == nil && dur > 0 {
				return dur
			}
		case map[string]any:
			s, _ := v["seconds"].(float64)
			if str, ok := v["seconds"].(string); ok { // int64 fields are strings in proto3 JSON
				s, _ = strconv.ParseFloat(str, 64)
			}
			n, _ := v["nanos"].(float64)
			if dur := time.Duration(s*float64(time.Second) + n); dur > 0 {
				return dur
			}
		}
	}
	return 0
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), which a
// proxy in front of Gemini may send.
func retryAfter(h http.Header, now time.Time) time.Duration {
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

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}
