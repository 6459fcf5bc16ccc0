package llm

import (
	"fmt"
	"time"

	"github.com/massgen/massgen/internal/redact"
)

// Error is a provider failure, typed so that callers can decide what to do
// (retry, give up on the agent, tell the user which variable to set).
type Error struct {
	Provider string // backend type, e.g. "openai", "groq", "sim"
	Model    string
	Status   int  // HTTP status; 0 when the request never got a response
	Retry    bool // whether trying again may succeed (429, 5xx, cut streams)
	// After is the wait the provider asked for (retry-after), 0 when none.
	After   time.Duration
	Message string
	Err     error
}

// Error is the one place a provider failure becomes text, so it is where
// secrets are masked (see package redact): a 401 body that echoes the
// bearer key, a proxy page that prints the request headers. Every log,
// event, file and server response downstream gets this text.
func (e *Error) Error() string {
	s := e.Provider
	if e.Model != "" {
		s += " model " + e.Model
	}
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return redact.String(s)
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether the same request may succeed later.
func (e *Error) IsRetryable() bool { return e.Retry }

// RetryAfter is the delay the provider asked for, or 0.
func (e *Error) RetryAfter() time.Duration { return e.After }

// RetryableStatus reports whether an HTTP status is worth retrying.
func RetryableStatus(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}
