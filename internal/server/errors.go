package server

import (
	"github.com/massgen/massgen/internal/coord"

	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/massgen/massgen/internal/redact"
)

// Error is an HTTP error in OpenAI's JSON shape:
//
//	{"error": {"message": "...", "type": "...", "param": null, "code": "..."}}
//
// A Runner returns one to say why a run could not start and which status
// the client gets (400 for a bad config, 404 for an unknown model); any
// other error from a Runner is a 500.
type Error struct {
	Status  int    // HTTP status
	Message string // for the client
	Type    string // OpenAI error type; derived from Status when empty
	Param   string // the request parameter at fault, if any
	Code    string // machine-readable code, e.g. "model_not_found"
	// Collisions lists client tool names that collide with massgen's
	// workflow tools (a 400 with code "tool_name_collision").
	Collisions []string
	// RetryAfter, when set, is sent as the Retry-After header (whole
	// seconds, rounded up): when a retry may succeed.
	RetryAfter time.Duration
	// Failures are why each agent of a failed run left, as data (kind,
	// agent, provider, model, status, retryable): the body carries them.
	Failures []coord.Failure
	Err      error // the underlying error, if any
}

// Error is the text a client gets (the body's message, a stream's last
// progress line), with secrets masked (see package redact) as defence in
// depth: a provider's error is masked where it becomes text already, but a
// runner's error may wrap text from elsewhere.
func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return redact.Error(e.Err)
	}
	return redact.String(e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// NewError returns an *Error with the given status, code and message.
func NewError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorType is the OpenAI error type for a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusGatewayTimeout:
		return "timeout_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// asError turns any error into an *Error: an *Error in the chain keeps its
// status, anything else is a 500.
func asError(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: err.Error(), Err: err}
}

type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Message    string   `json:"message"`
	Type       string   `json:"type"`
	Param      *string  `json:"param"`
	Code       *string  `json:"code"`
	Collisions []string `json:"collisions,omitempty"`
	// Failures extends OpenAI's error object: why each agent of a failed
	// run left. Clients that do not know the field ignore it.
	Failures []coord.Failure `json:"failures,omitempty"`
}

func (e *Error) object() errorObject {
	o := errorObject{Message: e.Error(), Type: e.Type, Collisions: e.Collisions, Failures: e.Failures}
	if o.Type == "" {
		o.Type = errorType(e.Status)
	}
	if e.Param != "" {
		o.Param = &e.Param
	}
	if e.Code != "" {
		o.Code = &e.Code
	}
	return o
}

// writeError sends e as the whole response.
func writeError(w http.ResponseWriter, e *Error) {
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	b, _ := json.Marshal(errorBody{Error: e.object()})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(b)+1))
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="massgen"`)
	}
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// The errors the server itself produces.
var (
	errShuttingDown = &Error{Status: http.StatusServiceUnavailable, Code: "server_shutting_down",
		Message: "The server is shutting down; retry against another instance or later."}
	errQueueFullHTTP = &Error{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded",
		Message: "Too many concurrent runs: every run slot and the whole wait queue are taken. Retry later."}
)
