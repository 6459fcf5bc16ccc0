package gemini

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/massgen/massgen/internal/llm"
)

// maxMessage bounds an error message taken from a response body.
const maxMessage = llm.MaxMessageLen

// requestError classifies a failure before a successful response arrived:
// an HTTP error status, a transport error, or a request the SDK refused to
// build. Cancellation has been handled by the caller.
func (m *model) requestError(model string, err error, x *exchange) error {
	apiErr, isAPI := errors.AsType[genai.APIError](err)
	switch {
	case x.status >= 400 || isAPI:
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
		after := retryDelay(g.Details)
		if after == 0 {
			after = retryAfter(x.header, time.Now())
		}
		msg := cmp.Or(truncate(g.Message), g.Status) // else the status text
		return llm.StatusError(m.provider, model, cmp.Or(x.status, g.Code), msg, after, err)
	default:
		// A transport error, or the SDK refused the request before
		// sending it.
		return llm.RequestFailed(m.provider, model, m.baseURL, err)
	}
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
		return llm.StreamInterrupted(m.provider, model, x.readErr)
	}
	e.Message = "stream interrupted: " + truncate(err.Error())
	return e
}

// canceled: see llm.Canceled.
func canceled(ctxErr error) error { return llm.Canceled("gemini", ctxErr) }

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
// proxy in front of Gemini may send. Unlike llm.RetryAfter it does not
// look at Retry-After-Ms.
func retryAfter(h http.Header, now time.Time) time.Duration {
	return llm.ParseRetryAfter(h.Get("Retry-After"), now)
}

// truncate trims s and clips it with llm.ClipMessage.
func truncate(s string) string { return llm.ClipMessage(strings.TrimSpace(s)) }
