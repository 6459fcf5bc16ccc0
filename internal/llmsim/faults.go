package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Fault names a Step may use besides an HTTP status.
const (
	// faultCut streams about half of the response and then drops the
	// connection without the terminating chunk or [DONE]: what a client sees
	// when a proxy or the provider dies mid-stream.
	faultCut = "cut"
	// faultMalformedToolJSON calls new_answer with arguments that are not
	// valid JSON (the text stops before the closing quote and brace).
	faultMalformedToolJSON = "malformed_tool_json"
	// faultNoToolCall answers in plain text although tools are offered, the
	// commonest way real models break the workflow protocol.
	faultNoToolCall = "no_tool_call"
	// faultHang sends the headers (and, when streaming, the role chunk) and
	// then nothing more until the client gives up or the server closes.
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

// errorBody is OpenAI's error envelope. The SDK turns it into *openai.Error
// with Code, Message, Type and Param filled in.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// providerError returns the message, type and code the real API uses for a
// status, so that error classification in the adapters is tested against
// realistic bodies rather than against whatever the simulator made up.
func providerError(status int, model string) (msg, typ string, code *string) {
	str := func(s string) *string { return &s }
	switch status {
	case http.StatusBadRequest:
		return "Invalid request (simulated).", "invalid_request_error", nil
	case http.StatusUnauthorized:
		return "Incorrect API key provided: sim. You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid_request_error", str("invalid_api_key")
	case http.StatusForbidden:
		return "You are not allowed to use this model (simulated).", "invalid_request_error", str("unsupported_country_region_territory")
	case http.StatusNotFound:
		return fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
			"invalid_request_error", str("model_not_found")
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Rate limit reached for %s in organization org-sim on requests per min (RPM): Limit 3, Used 3, Requested 1 (simulated).", model),
			"requests", str("rate_limit_exceeded")
	case http.StatusInternalServerError:
		return "The server had an error while processing your request. Sorry about that!", "server_error", nil
	case http.StatusServiceUnavailable:
		return "The engine is currently overloaded, please try again later.", "server_error", nil
	}
	if status >= 500 {
		return fmt.Sprintf("Simulated server error %d.", status), "server_error", nil
	}
	return fmt.Sprintf("Simulated client error %d.", status), "invalid_request_error", nil
}

// writeError sends an OpenAI error response. retryAfter > 0 adds both
// retry-after (seconds, fractional allowed: the SDK parses floats) and
// retry-after-ms, as OpenAI does.
func writeError(w http.ResponseWriter, status int, msg, typ string, code *string, retryAfter float64) {
	body, _ := json.Marshal(errorBody{Error: errorDetail{Message: msg, Type: typ, Code: code}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(retryAfter, 'f', -1, 64))
		h.Set("Retry-After-Ms", strconv.FormatInt(int64(retryAfter*1000), 10))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeInvalid sends a 400 for a request the simulator cannot understand.
func writeInvalid(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusBadRequest, msg, "invalid_request_error", nil, 0)
}

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
