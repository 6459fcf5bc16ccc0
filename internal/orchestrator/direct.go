package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// directReason is the FinalAnswer reason of a direct run.
const directReason = "single agent without coordination (use_orchestrator_for_single_agent: false)"

// direct answers with one plain model call of the team's only agent: no
// workflow tools, no vote, no presentation (Options.Direct). The answer is
// streamed as the final answer; the run deadline bounds the call.
func (r *runner) direct(ctx context.Context) *Result {
	r.attempt = 1
	a := &r.o.Agents[0]
	res := &Result{Winner: a.ID, How: "single agent, no coordination"}
	dctx, cancel := context.WithDeadline(ctx, r.deadline)
	defer cancel()
	user := agent.HistoryBlock(r.o.History) + r.question
	r.publish(event.FinalStarted{Agent: a.ID, Prompt: strings.TrimSpace(a.SystemMessage + "\n\n" + user), Mode: "direct"})
	text, calls, usage, err := agent.PresentWithTools(dctx, a.Model, llm.Request{Model: a.ModelName, Params: a.Params},
		a.SystemMessage, user, r.o.ClientTools, deltas{b: r.o.Events, agent: a.ID, final: true, attempt: 1})
	cost := r.addUsage(a.ID, usage)
	switch {
	case ctx.Err() != nil:
		res.Status, res.Err = Interrupted, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case dctx.Err() != nil:
		res.Status, res.Err = TimedOut, fmt.Errorf("no answer before the run deadline (%s)", r.o.Timeout)
	case err != nil:
		res.Status, res.Err = Failed, fmt.Errorf("agent %s: %w", a.ID, err)
	case text == "" && len(calls) == 0:
		res.Status, res.Err = Failed, fmt.Errorf("agent %s: the model returned an empty answer", a.ID)
	default:
		res.Status, res.Final, res.ToolCalls = Completed, text, calls
	}
	if res.Status != Completed {
		r.publish(event.AgentFailed{Agent: a.ID, Reason: "its only call", Err: res.Err.Error()})
		return res
	}
	r.publish(event.FinalAnswer{Agent: a.ID, Text: res.Final, Reason: directReason,
		Usage: event.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, CostUSD: cost}})
	return res
}
