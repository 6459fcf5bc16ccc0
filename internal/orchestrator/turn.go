package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

func (r *runner) startTurn(ctx context.Context, c coord.StartTurn, inbox chan inboxMsg, loopDone chan struct{}) {
	a, attempt := r.byID[c.Agent], r.attempt
	tctx, cancel := context.WithCancelCause(ctx)
	lt := &liveTurn{agent: c.Agent, cancel: cancel}
	if r.o.Inject {
		lt.updates = make(chan coord.StartTurn, 1)
	}
	r.live[c.Turn] = lt
	user := agent.HistoryBlock(r.o.History) + agent.UserMessage(r.question, r.feedback, c.Answers)
	r.publish(event.TurnStarted{Agent: c.Agent, Prompt: user, Shown: r.answerRefs(c.Answers)})
	send := func(m inboxMsg) bool {
		select {
		case inbox <- m:
			return true
		case <-loopDone:
			return false
		}
	}
	turn := &agent.Turn{
		Model:   a.Model,
		Request: llm.Request{Model: a.ModelName, Params: a.Params},
		System:  agent.SystemPrompt(a.SystemMessage, r.o.VotingSensitivity, r.o.Novelty, r.o.Now()) + agent.ToolsSection(r.o.ClientTools),
		User:    user,
		Answers: c.Answers,
		Epoch:   c.Epoch,
		Emit:    deltas{b: r.o.Events, agent: c.Agent, attempt: attempt, epoch: c.Epoch},
		Updates: lt.updates,
		Judge: func(seen int, act coord.Action) coord.Verdict {
			reply := make(chan coord.Verdict, 1)
			if !send(inboxMsg{agent: c.Agent, turn: c.Turn, submit: &submission{seen: seen, act: act, reply: reply}}) {
				return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
			}
			return <-reply
		},
		OnReject: func(reason string) {
			r.o.Events.Publish(event.ActionRejected{Header: event.Header{Attempt: attempt, Epoch: c.Epoch}, Agent: c.Agent, Reason: reason})
		},
	}
	timeout := r.o.TurnTimeout
	r.wg.Go(func() {
		defer cancel(nil)
		runCtx := tctx
		if timeout > 0 {
			var stop context.CancelFunc
			runCtx, stop = context.WithTimeout(tctx, timeout)
			defer stop()
		}
		res := turn.Run(runCtx)
		if res.Err != nil && errors.Is(res.Err, context.DeadlineExceeded) && tctx.Err() == nil {
			res.Err = fmt.Errorf("turn timed out after %s: %w", timeout, context.DeadlineExceeded)
		}
		cost := r.addUsage(c.Agent, res.Usage)
		// Usage is published as the turn ends, cancelled turns included, so
		// the logs count every token that was paid for.
		r.o.Events.Publish(event.TurnEnded{Header: event.Header{Attempt: attempt, Epoch: c.Epoch}, Agent: c.Agent,
			Usage: event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens, CostUSD: cost}})
		send(inboxMsg{agent: c.Agent, turn: c.Turn, result: &res})
	})
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
