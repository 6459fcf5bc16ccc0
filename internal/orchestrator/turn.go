package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

func (r *runner) startTurn(ctx context.Context, c coord.StartTurn) {
	a, attempt := r.byID[c.Agent], r.attempt
	tctx, cancel := context.WithCancelCause(ctx)
	lt := &liveTurn{agent: c.Agent, cancel: cancel}
	if r.o.RestartPolicy == coord.RestartInject {
		lt.updates = make(chan coord.StartTurn, 1)
	}
	r.live[c.Turn] = lt
	prepare := r.beforeTurn(a)
	user := agent.HistoryBlock(r.o.History) + agent.UserMessage(r.question, r.feedback, c.Answers)
	started := event.TurnStarted{Agent: c.Agent, Prompt: user, Shown: r.answerRefs(c.Answers)}
	if c.Delay > 0 {
		started.Reason = fmt.Sprintf("retry after %s (backoff after failed turns)", c.Delay)
	}
	r.publish(started)
	turn := &agent.Turn{
		Model:   a.Model,
		Request: llm.Request{Model: a.ModelName, Params: a.Params},
		System:  agent.SystemPrompt(a.SystemMessage, r.o.VotingSensitivity.String(), r.o.Novelty.String(), r.o.Now()) + agent.ToolsSection(r.o.ClientTools),
		User:    user,
		Answers: c.Answers,
		Epoch:   c.Epoch,
		Emit:    deltas{b: r.o.Events, agent: c.Agent, attempt: attempt, epoch: c.Epoch},
		Updates: lt.updates,
		Tools:   a.Tools,
		OnTool: func(call llm.ToolCall, res tool.Result, d time.Duration) {
			r.countTools(c.Agent, ToolUse{Calls: 1, Errors: btoi(res.IsError)})
			r.o.Events.Publish(event.ToolCalled{Header: event.Header{Attempt: attempt, Epoch: c.Epoch}, Agent: c.Agent,
				Tool: call.Name, Args: preview(call.Arguments), Result: preview(res.Content), IsError: res.IsError, Duration: d})
		},
		Judge: func(seen int, act coord.Action) coord.Verdict {
			reply := make(chan coord.Verdict, 1)
			if !r.send(inboxMsg{agent: c.Agent, turn: c.Turn, submit: &submission{seen: seen, act: act, reply: reply}}) {
				return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
			}
			select {
			case v := <-reply:
				return v
			case <-r.loopDone:
				return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
			}
		},
		OnReject: func(reason string) {
			r.o.Events.Publish(event.ActionRejected{Header: event.Header{Attempt: attempt, Epoch: c.Epoch}, Agent: c.Agent, Reason: reason})
		},
	}
	timeout := r.o.TurnTimeout
	r.wg.Go(func() {
		defer cancel(nil)
		var res agent.Result
		if wait(tctx, c.Delay) {
			prepare(c.Answers)
			runCtx := r.o.Activities.watch(tctx, c.Agent)
			if timeout > 0 {
				var stop context.CancelFunc
				runCtx, stop = context.WithTimeout(runCtx, timeout)
				defer stop()
			}
			res = turn.Run(r.toolProgress(runCtx, c.Agent, attempt, c.Epoch))
			if res.Err != nil && errors.Is(res.Err, context.DeadlineExceeded) && tctx.Err() == nil {
				res.Err = fmt.Errorf("turn timed out after %s: %w", timeout, context.DeadlineExceeded)
			}
		} else {
			res.Err = context.Cause(tctx) // cancelled while waiting: no request was made
		}
		cost := r.addUsage(c.Agent, res.Usage)
		r.countTools(c.Agent, ToolUse{Rounds: res.Steps})
		// Usage is published as the turn ends, cancelled turns included, so
		// the logs count every token that was paid for.
		r.o.Events.Publish(event.TurnEnded{Header: event.Header{Attempt: attempt, Epoch: c.Epoch}, Agent: c.Agent,
			Usage: event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens, CostUSD: cost}, ToolRounds: res.Steps})
		r.send(inboxMsg{agent: c.Agent, turn: c.Turn, result: &turnResult{err: res.Err}})
	})
}

// toolProgress returns ctx with the progress of agent's tools published
// as ToolProgress events (droppable: a slow reader loses some, not the run).
func (r *runner) toolProgress(ctx context.Context, agent string, attempt, epoch int) context.Context {
	return tool.WithProgress(ctx, func(p tool.Progress) {
		r.o.Events.Publish(event.ToolProgress{Header: event.Header{Attempt: attempt, Epoch: epoch}, Agent: agent,
			Tool: p.Tool, Progress: p.Progress, Total: p.Total, Message: p.Message})
	})
}

// wait sleeps for d (a retry backoff) unless ctx ends first; it reports
// whether the turn should go ahead.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// addUsage records a finished request's usage and returns its cost.
func (r *runner) addUsage(id string, u llm.Usage) float64 {
	var c float64
	if f := r.byID[id].Cost; f != nil {
		c = f(u)
	}
	r.mu.Lock()
	r.usage[id].Add(u)
	r.cost[id] += c
	r.mu.Unlock()
	return c
}

// countTools adds to id's tool use: a call as it is made, the rounds of a
// turn as it ends.
func (r *runner) countTools(id string, add ToolUse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.tools[id]
	r.tools[id] = ToolUse{Calls: u.Calls + add.Calls, Errors: u.Errors + add.Errors, Rounds: u.Rounds + add.Rounds}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// overBudget says which limit the run has reached, or "".
func (r *runner) overBudget() string {
	if r.o.MaxCostUSD <= 0 && r.o.MaxTokens <= 0 {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var cost float64
	var tokens int64
	for id, u := range r.usage {
		cost += r.cost[id]
		tokens += u.Total()
	}
	switch {
	case r.o.MaxCostUSD > 0 && cost >= r.o.MaxCostUSD:
		return fmt.Sprintf("max_cost_usd: spent $%.4f of $%.4f", cost, r.o.MaxCostUSD)
	case r.o.MaxTokens > 0 && tokens >= r.o.MaxTokens:
		return fmt.Sprintf("max_total_tokens: spent %d of %d tokens", tokens, r.o.MaxTokens)
	}
	return ""
}

// deltas forwards streamed text to the event broker. Turn goroutines
// publish directly (not through the loop), so they carry the attempt and the
// epoch of the answer set their turn saw.
type deltas struct {
	b              *event.Broker
	agent          string
	final          bool // the text is the final presentation's
	attempt, epoch int
}

func (d deltas) Text(s string) {
	h := event.Header{Attempt: d.attempt, Epoch: d.epoch}
	if d.final {
		d.b.Publish(event.FinalDelta{Header: h, Agent: d.agent, Text: s})
		return
	}
	d.b.Publish(event.TextDelta{Header: h, Agent: d.agent, Text: s})
}

func (d deltas) Reasoning(s string) {
	d.b.Publish(event.ReasoningDelta{Header: event.Header{Attempt: d.attempt, Epoch: d.epoch}, Agent: d.agent, Text: s})
}

// preview shortens a tool call's arguments or result for the events; the
// model got them whole.
func preview(s string) string {
	n := 2000
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never cut a character in two
	}
	return s[:n] + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}
