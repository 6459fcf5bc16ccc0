package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llm"
)

// requestError classifies a failure of the request itself (no usable
// response yet): cancellation, an HTTP error status, or a transport error.
// resp is what the wire probe saw.
func (m *model) requestError(ctx context.Context, model string, err error, resp *wireProbe) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	if apiErr, ok := errors.AsType[*responses.Error](err); ok {
		msg := cmp.Or(apiErr.Message, llm.ErrorBodyMessage(resp.errBody))
		return llm.StatusError(m.provider, model, apiErr.StatusCode, msg, llm.ResponseRetryAfter(apiErr.Response), err)
	}
	if resp.status >= 400 {
		// The SDK only builds an *openai.Error when the body is JSON with an
		// "error" member; a gateway in front of the API may answer with
		// plain text. The probe kept the response for this case.
		return llm.StatusError(m.provider, model, resp.status, llm.ErrorBodyMessage(resp.errBody),
			llm.RetryAfter(resp.header, time.Now()), err)
	}
	return llm.RequestFailed(m.provider, model, m.baseURL, err)
}

// streamError classifies a failure after a 2xx response started: whatever
// went wrong (a cut connection, an error event the SDK recognised by its
// `error` member, a garbled event), asking again may well succeed.
func (m *model) streamError(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return canceled(ctxErr)
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		// {"type":"error","error":{"code":…,"message":…}}: the SDK stops
		// at any event with an `error` member.
		f := streamErrorEvent(se.Event.Data)
		msg := "error event in stream: " + f.describe()
		return &llm.Error{Provider: m.provider, Model: model, Retry: f.retryable(), Message: msg, Err: err}
	}
	return llm.StreamInterrupted(m.provider, model, err)
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
	msg := llm.ClipMessage(strings.TrimSpace(f.message))
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

// canceled: see llm.Canceled.
func canceled(ctxErr error) error { return llm.Canceled("openai", ctxErr) }
