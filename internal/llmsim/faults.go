package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// Fault names a Step may use besides an HTTP status.
const (
	// faultCut streams about half of the response and then drops the
	// connection without the closing events ([DONE], response.completed,
	// message_stop, ...): what a client sees when a proxy or the provider
	// dies mid-stream.
	faultCut = "cut"
	// faultMalformedToolJSON calls new_answer with arguments that are not
	// valid JSON (the text stops before the closing quote and brace).
	faultMalformedToolJSON = "malformed_tool_json"
	// faultNoToolCall answers in plain text although tools are offered, the
	// commonest way real models break the workflow protocol.
	faultNoToolCall = "no_tool_call"
	// faultHang sends the headers (and, when streaming, the wire's opening
	// events) and then nothing more until the client gives up or the server
	// closes.
	faultHang = "hang"
)

// parseFault tells an HTTP status fault (status > 0) from a named one.
func parseFault(s string) (status int, name string, ok bool) {
	switch s {
	case faultCut, faultMalformedToolJSON, faultNoToolCall, faultHang:
		return 0, s, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 400 || n > 599 {
		return 0, "", false
	}
	return n, "", true
}

// Outcomes of an exchange that ended early. They are sentinels, not errors
// reported to anyone: the handler maps them to Record.Outcome.
var (
	errCancelled = errors.New("llmsim: client went away")
	errCut       = errors.New("llmsim: stream cut by scenario")
)

// hang blocks until the client cancels or the server closes. Nothing else
// can end it: that is the point of the fault.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return errCancelled
}

// malformedArguments is a new_answer argument text that stops before its
// closing quote and brace, like a model cut off by max_tokens.
func malformedArguments(content string) string {
	b, _ := json.Marshal(struct {
		Content string `json:"content"`
	}{content})
	return string(b[:len(b)-2])
}
