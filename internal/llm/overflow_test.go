package llm

import (
	"errors"
	"fmt"
	"testing"
)

// The providers' own words for an input that does not fit, as their docs
// and SDK tests give them, are recognised with the window when they say
// it; other 400s, and any other status, are not.
func TestContextOverflowIsRecognisedInEachProvidersWords(t *testing.T) {
	for _, c := range []struct {
		status int
		msg    string
		window int
		ok     bool
	}{
		{400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", 128000, true},
		{400, "Your input exceeds the context window of this model. Please adjust your input and try again.", 0, true},
		{400, "prompt is too long: 208310 tokens > 200000 maximum", 200000, true},
		{413, "request_too_large: Request exceeds the maximum size", 0, true},
		{400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", 1048576, true},
		{400, "the request exceeds the available context size, try increasing it", 0, true},
		{400, "Invalid value for 'temperature': must be at most 2.", 0, false},
		{400, "Unrecognized request argument supplied: permissions", 0, false},
		{500, "This model's maximum context length is 8192 tokens.", 0, false},
		{429, "Request too large for gpt-4o: too many tokens per minute", 0, false},
	} {
		err := fmt.Errorf("turn: %w", &Error{Provider: "p", Status: c.status, Message: c.msg})
		window, ok := ContextOverflow(err)
		if ok != c.ok || window != c.window {
			t.Errorf("%d %q: (%d, %v), want (%d, %v)", c.status, c.msg, window, ok, c.window, c.ok)
		}
	}
	if _, ok := ContextOverflow(errors.New("maximum context length is 10 tokens")); ok {
		t.Error("an error that is no provider's was taken for an overflow")
	}
}
