package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// startCall runs the presentation, evaluation or direct call of agent id in
// its own goroutine; its result comes back to the loop. The machine bounds
// it (the deadline, the presentation grace) with CancelCall, not a context
// deadline, so that the rule lives in one place.
func (r *runner) startCall(ctx context.Context, id string, call func(context.Context) callResult) {
	cctx, cancel := context.WithCancelCause(ctx)
	r.call = cancel
	r.wg.Go(func() {
		defer cancel(nil)
		res := call(r.o.Activities.watch(cctx, id))
		res.cost = r.addUsage(id, res.usage)
		r.send(inboxMsg{agent: id, call: &res})
	})
}

// startPresentation has the winner write the final answer.
func (r *runner) startPresentation(ctx context.Context, p coord.Present) {
	a := r.byID[p.Winner]
	prepare := r.beforeTurn(a)
	system := agent.PresentationSystem(a.SystemMessage)
	user := agent.HistoryBlock(r.o.History) + agent.PresentationUser(r.question, p.Winner, voteSummary(p.Winner, p.Tally, p.How, p.Votes), p.Answers)
	user = withFinalInstruction(user, r.o.FinalInstruction)
	r.publish(event.FinalStarted{Agent: p.Winner, Prompt: system + "\n\n" + user, Mode: "presentation"})
	emit := deltas{b: r.o.Events, agent: p.Winner, final: true, attempt: r.attempt, epoch: r.epoch}
	attempt, epoch := r.attempt, r.epoch // read here, on the loop goroutine
	r.startCall(ctx, p.Winner, func(ctx context.Context) callResult {
		prepare(p.Answers)
		if a.OnPresent != nil {
			a.OnPresent(true)
			defer a.OnPresent(false)
		}
		if a.PresentTools != nil {
			pr := &agent.Presentation{Model: a.Model, Request: finalRequest(a),
				System: system, User: user, Client: r.o.ClientTools, Tools: a.PresentTools, Emit: emit,
				OnTool: func(call llm.ToolCall, res tool.Result, d time.Duration) {
					r.countTools(p.Winner, ToolUse{Calls: 1, Errors: btoi(res.IsError)})
					r.o.Events.Publish(event.ToolCalled{Header: event.Header{Attempt: attempt, Epoch: epoch}, Agent: p.Winner,
						Tool: call.Name, Args: preview(call.Arguments), Result: preview(res.Content), IsError: res.IsError, Duration: d})
				}}
			return presented(pr.Run(r.toolProgress(ctx, p.Winner, attempt, epoch)))
		}
		text, calls, usage, err := agent.PresentWithTools(ctx, a.Model, finalRequest(a), system, user, r.o.ClientTools, emit)
		return presented(text, calls, usage, err)
	})
}

// startDirect has the only agent answer in one plain call (Settings.Direct):
// no workflow tools, no vote, no presentation. The answer streams as the
// final answer.
func (r *runner) startDirect(ctx context.Context, c coord.AnswerDirect) {
	a := r.byID[c.Agent]
	user := withFinalInstruction(agent.HistoryBlock(r.o.History)+r.question, r.o.FinalInstruction)
	r.publish(event.FinalStarted{Agent: a.ID, Prompt: strings.TrimSpace(a.SystemMessage + "\n\n" + user), Mode: "direct"})
	emit := deltas{b: r.o.Events, agent: a.ID, final: true, attempt: r.attempt}
	r.startCall(ctx, a.ID, func(ctx context.Context) callResult {
		text, calls, usage, err := agent.PresentWithTools(ctx, a.Model, finalRequest(a), a.SystemMessage, user, r.o.ClientTools, emit)
		return presented(text, calls, usage, err)
	})
}

// finalRequest is the request of agent a's final presentation or direct
// answer: its parameters, and its FinalParams over them.
func finalRequest(a *Agent) llm.Request {
	params := a.Params
	if len(a.FinalParams) > 0 {
		params = maps.Clone(a.Params)
		if params == nil {
			params = map[string]any{}
		}
		maps.Copy(params, a.FinalParams)
	}
	return llm.Request{Model: a.ModelName, Params: params}
}

// withFinalInstruction adds Options.FinalInstruction to a final prompt.
func withFinalInstruction(user, instruction string) string {
	if instruction == "" {
		return user
	}
	return user + "\n\n" + instruction
}

func presented(text string, calls []llm.ToolCall, usage llm.Usage, err error) callResult {
	in := coord.Presented{Text: text, ToolCalls: len(calls)}
	if err != nil {
		in, calls = coord.Presented{Err: err.Error()}, nil
	}
	return callResult{in: in, calls: calls, usage: usage}
}

// startEvaluation has the winner check the final answer.
func (r *runner) startEvaluation(ctx context.Context, c coord.Evaluate) {
	a := r.byID[c.Agent]
	r.startCall(ctx, c.Agent, func(ctx context.Context) callResult {
		ev := agent.PostEvaluate(ctx, a.Model, llm.Request{Model: a.ModelName, Params: a.Params},
			agent.PresentationSystem(a.SystemMessage), agent.PostEvalUser(r.question, c.Final), nil)
		return callResult{in: coord.Evaluated{Restart: ev.Restart, Reason: ev.Reason, Instructions: ev.Instructions}, usage: ev.Usage}
	})
}

// agentFeedback is what every agent of the next attempt reads about the
// rejected one.
func agentFeedback(c coord.Restart) string {
	return agent.FeedbackBlock(c.Reason, c.Instructions, c.Final)
}

// voteSummary is the sentence the presenter reads about its votes.
func voteSummary(winner string, tally map[string]int, how string, votes []coord.Vote) string {
	var reasons []string
	for _, v := range votes {
		if v.Target == winner && v.Reason != "" {
			reasons = append(reasons, v.Reason)
		}
	}
	ids := make([]string, 0, len(tally))
	for id := range tally {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%s: %d", id, tally[id]))
	}
	s := fmt.Sprintf("You received %d vote(s) (%s). Winner chosen by %s.", tally[winner], strings.Join(parts, ", "), how)
	if len(reasons) > 0 {
		s += " Reasons: " + strings.Join(reasons, "; ")
	}
	return s
}
