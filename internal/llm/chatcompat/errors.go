package chatcompat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/massgen/massgen/internal/llm"
)

// requestError classifies a failure of the request itself (no usable
// response yet): cancellation, an HTTP error status, or a transport error.
// resp is what the wire probe saw, possibly nil.
func (m *model) requestError(ctx context.Context, model string, err error, resp *wireProbe) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	if apiErr, ok := errors.AsType[*openai.Error](err); ok {
		msg := apiErr.Message
		if msg == "" && resp != nil {
			msg = llm.ErrorBodyMessage(resp.errBody)
		}
		return llm.StatusError(m.provider, model, apiErr.StatusCode, msg, llm.ResponseRetryAfter(apiErr.Response), err)
	}
	if resp != nil && resp.status >= 400 {
		// The SDK only builds an *openai.Error when the body is JSON with an
		// "error" member; other servers answer with plain text or a bare
		// {"message": ...}. The probe kept the response for this case.
		msg := llm.ErrorBodyMessage(resp.errBody)
		return llm.StatusError(m.provider, model, resp.status, msg, llm.RetryAfter(resp.header, time.Now()), err)
	}
	return llm.RequestFailed(m.provider, model, m.baseURL, err)
}

// streamError classifies a failure after a 2xx response started: whatever
// went wrong (a cut connection, an error event, a garbled chunk), asking
// again may well succeed.
func (m *model) streamError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	se, ok := errors.AsType[*ssestream.StreamError](err)
	if !ok {
		return llm.StreamInterrupted(m.provider, model, err)
	}
	msg := "error event in stream: " + eventMessage(se.Event.Data)
	return &llm.Error{Provider: m.provider, Model: model, Retry: true, Message: msg, Err: err}
}

// canceled: see llm.Canceled.
func canceled(ctxErr error) error { return llm.Canceled("chatcompat", ctxErr) }

// eventMessage extracts the message of an SSE error event such as
// {"error":{"message":"…","code":502}} or {"error":"…"}.
func eventMessage(data []byte) string {
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &ev) == nil && len(ev.Error) > 0 {
		if msg := llm.ErrorMemberMessage(ev.Error); msg != "" {
			return msg
		}
	}
	return llm.ClipMessage(strings.TrimSpace(string(data)))
}
