package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/massgen/massgen/internal/llm"
)

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
	apiErr, ok := errors.AsType[*anthropic.Error](err)
	if !ok {
		return llm.RequestFailed(m.provider, model, m.baseURL, err)
	}
	msg := llm.ClipMessage(apiErr.Message)
	if msg == "" {
		msg = bodyMessage([]byte(apiErr.RawJSON()))
	}
	if apiErr.Response == nil {
		return llm.StatusError(m.provider, model, apiErr.StatusCode, msg, 0, err)
	}
	h := apiErr.Response.Header
	e := llm.StatusError(m.provider, model, apiErr.StatusCode, msg, llm.RetryAfter(h, time.Now()), err)
	// Anthropic says outright whether a retry can help.
	switch h.Get("X-Should-Retry") {
	case "true":
		e.Retry = true
	case "false":
		e.Retry = false
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
		msg := llm.ClipMessage(apiErr.Message)
		if msg == "" {
			msg = llm.ClipMessage(strings.TrimSpace(apiErr.RawJSON()))
		}
		if typ != "" {
			msg = typ + ": " + msg
		}
		e.Message = "error event in stream: " + msg
		return e
	}
	if msg, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok {
		// An error event whose data is not Anthropic's error JSON.
		e.Message = "error event in stream: " + llm.ClipMessage(msg)
		return e
	}
	return llm.StreamInterrupted(m.provider, model, err)
}

// canceled: see llm.Canceled.
func canceled(ctxErr error) error { return llm.Canceled("anthropic", ctxErr) }

// bodyMessage extracts the message from an error body that is not
// Anthropic's {"type":"error","error":{…}}: {"error":"…"}, {"message":…}
// or plain text (a proxy's page). Unlike llm.ErrorBodyMessage it does not
// read a "detail" member.
func bodyMessage(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &doc) == nil {
		if msg := llm.ErrorMemberMessage(doc.Error); msg != "" {
			return msg
		}
		if doc.Message != "" {
			return llm.ClipMessage(doc.Message)
		}
	}
	return llm.ClipMessage(strings.TrimSpace(string(body)))
}
