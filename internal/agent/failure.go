package agent

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/redact"
)

// FailureOf turns the error a task ended with into a Failure: the one
// place where a provider's typed error becomes data, so nothing
// downstream parses messages. provider and model are the agent's own, for
// failures that carry none (a tool, a timeout); the message is masked of
// secrets.
func FailureOf(err error, agent, provider, model string) *coord.Failure {
	if err == nil {
		return nil
	}
	f := &coord.Failure{Kind: coord.FailOther, Agent: agent, Provider: provider, Model: model, Message: redact.Error(err)}
	pe, fromProvider := errors.AsType[*llm.Error](err)
	if fromProvider {
		f.Provider, f.Model, f.Status, f.Retryable = cmp.Or(pe.Provider, provider), cmp.Or(pe.Model, model), pe.Status, pe.Retry
	}
	_, stall := errors.AsType[*llm.StallError](err)
	_, tools := errors.AsType[*toolsError](err)
	_, protocol := errors.AsType[*protocolError](err)
	// Our own causes first: a provider error may wrap the context's end or
	// the idle watch's, and then those are what happened.
	if fromProvider && pe.After > 0 {
		f.RetryAfterSeconds = pe.After.Seconds()
	}
	switch {
	case errors.Is(err, llm.ErrCircuitOpen):
		f.Kind, f.Retryable = coord.FailCircuitOpen, true
		if open, ok := errors.AsType[*llm.CircuitOpenError](err); ok && open.Wait > 0 {
			f.RetryAfterSeconds = open.Wait.Seconds()
		}
	case errors.Is(err, context.DeadlineExceeded):
		f.Kind, f.Retryable = coord.FailTimeout, true
	case errors.Is(err, context.Canceled):
		f.Kind, f.Retryable = coord.FailCancelled, false
	case stall:
		f.Kind, f.Retryable = coord.FailStall, true
	case fromProvider:
		f.Kind = providerKind(pe)
	case tools:
		f.Kind = coord.FailTool
	case protocol:
		f.Kind = coord.FailProtocol
	}
	return f
}

// providerKind classifies a provider's error by its status and, for a 429,
// by whether the account is out of quota (retrying does not help) or only
// going too fast.
func providerKind(e *llm.Error) coord.FailureKind {
	switch s := e.Status; {
	case s == 401 || s == 403:
		return coord.FailAuth
	case s == 402:
		return coord.FailQuota
	case s == 429:
		msg := strings.ToLower(e.Message)
		if strings.Contains(msg, "insufficient_quota") || strings.Contains(msg, "exceeded your current quota") ||
			strings.Contains(msg, "credit") || strings.Contains(msg, "billing") {
			return coord.FailQuota
		}
		return coord.FailRateLimit
	case s >= 400 && s < 500:
		return coord.FailBadRequest
	}
	return coord.FailProvider
}

// toolsError is a turn that could not use its tools (an MCP server that
// did not start, a name colliding with a workflow tool).
type toolsError struct{ err error }

func (e *toolsError) Error() string { return "agent tools: " + e.err.Error() }
func (e *toolsError) Unwrap() error { return e.err }

// protocolError is a turn that never produced a valid workflow action:
// its attempts or its tool steps ran out.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }
