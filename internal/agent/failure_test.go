package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func TestFailureOfClassifiesEveryKindOfError(t *testing.T) {
	perr := func(status int, retry bool, msg string) error {
		return &llm.Error{Provider: "openai", Model: "gpt-4o", Status: status, Retry: retry, Message: msg}
	}
	for _, tc := range []struct {
		name      string
		err       error
		kind      coord.FailureKind
		status    int
		retryable bool
	}{
		{"401 is auth", perr(401, false, "invalid api key"), coord.FailAuth, 401, false},
		{"403 is auth", perr(403, false, "forbidden"), coord.FailAuth, 403, false},
		{"402 is quota", perr(402, false, "payment required"), coord.FailQuota, 402, false},
		{"429 out of quota is quota", perr(429, false, `{"code":"insufficient_quota"}`), coord.FailQuota, 429, false},
		{"429 is a rate limit", perr(429, true, "rate limit reached"), coord.FailRateLimit, 429, true},
		{"400 is a bad request", perr(400, false, "unknown parameter"), coord.FailBadRequest, 400, false},
		{"404 model_not_found is a bad request", perr(404, false, "model_not_found"), coord.FailBadRequest, 404, false},
		{"500 is the provider's", perr(500, true, "internal"), coord.FailProvider, 500, true},
		{"a cut stream is the provider's", perr(0, true, "stream ended early"), coord.FailProvider, 0, true},
		{"an open circuit", &llm.CircuitOpenError{Name: "x", Failures: 3, Last: errors.New("500")}, coord.FailCircuitOpen, 0, true},
		{"an idle stream", &llm.StallError{Idle: 60e9}, coord.FailStall, 0, true},
		{"a provider error wrapping the idle watch", &llm.Error{Provider: "openai", Retry: true, Err: &llm.StallError{Idle: 60e9}}, coord.FailStall, 0, true},
		{"the turn's deadline", fmt.Errorf("request: %w", context.DeadlineExceeded), coord.FailTimeout, 0, true},
		{"a provider error wrapping the deadline", &llm.Error{Provider: "openai", Err: context.DeadlineExceeded}, coord.FailTimeout, 0, true},
		{"a cancelled turn", context.Canceled, coord.FailCancelled, 0, false},
		{"tools that would not start", &toolsError{errors.New("mcp server x: exit 1")}, coord.FailTool, 0, false},
		{"no valid action", &protocolError{"no valid workflow action after 3 attempts"}, coord.FailProtocol, 0, false},
		{"anything else", errors.New("boom"), coord.FailOther, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := FailureOf(tc.err, "a1", "openai", "gpt-4o")
			if f.Kind != tc.kind || f.Status != tc.status || f.Retryable != tc.retryable {
				t.Errorf("FailureOf = %+v, want kind %s, status %d, retryable %v", *f, tc.kind, tc.status, tc.retryable)
			}
			if f.Agent != "a1" || f.Provider != "openai" || f.Model != "gpt-4o" || f.Message == "" {
				t.Errorf("FailureOf = %+v, want agent, provider, model and a message", *f)
			}
		})
	}
	if FailureOf(nil, "a1", "openai", "gpt-4o") != nil {
		t.Error("no error must be no failure")
	}
}

func TestFailureOfNamesTheProviderItCameFromAndMasksKeys(t *testing.T) {
	err := fmt.Errorf("turn: %w", &llm.Error{Provider: "groq", Model: "llama-3.3", Status: 401,
		Message: "Incorrect API key provided: sk-abcdefghijklmnop1234"})
	f := FailureOf(err, "a1", "openai", "gpt-4o")
	if f.Provider != "groq" || f.Model != "llama-3.3" {
		t.Errorf("provider/model %s/%s, want the error's own groq/llama-3.3", f.Provider, f.Model)
	}
	if strings.Contains(f.Message, "abcdefghijklmnop1234") || strings.Contains(f.Error(), "abcdefghijklmnop1234") {
		t.Errorf("the key leaked into the failure: %q", f.Message)
	}
}
