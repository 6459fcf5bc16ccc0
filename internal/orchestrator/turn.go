package orchestrator

import (
	"context"
	"fmt"
	"iter"
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
	lt := &liveTurn{agent: c.Agent, cancel: cancel, inbox: agent.NewInbox()}
	r.live[c.Turn] = lt
	prepare := r.beforeRound(a, true)
	user := agent.HistoryBlock(r.o.History) + r.coordinationUser(c)
	started := event.TurnStarted{Agent: c.Agent, Prompt: user, Shown: r.answerRefs(c.Answers)}
	if c.Delay > 0 {
		started.Reason = fmt.Sprintf("retry after %s (backoff after failed turns)", c.Delay)
	}
	r.publish(started)
	task := agent.Task{
		Kind: agent.TaskCoordinate, Turn: c.Turn, Question: r.question,
		System: withPersona(r.personaFor(c.Agent, c.Answers),
			agent.SystemPrompt(a.SystemMessage, r.o.SensitivityOf(c.Agent).String(), r.o.Novelty.String(), r.o.Now())+agent.ToolsSection(r.o.ClientTools)),
		User:    user,
		Answers: c.Answers, Epoch: c.Epoch,
	}
	r.decompositionTurn(&task, a)
	if ck := r.m.Settings().Checklist; ck.Gates(c.Agent) {
		ck = agentChecklist(ck, c.Agent)
		task.System += r.checklistSection(ck) + agent.ChecklistExtras(ck, a.Checklist.Files != nil)
		task.Checklist = true
	}
	h := event.Header{Attempt: attempt, Epoch: c.Epoch}
	impl, timeout := r.impl(a), r.o.TurnTimeout
	after := r.queue(c.Agent)
	r.wg.Go(func() {
		defer cancel(nil)
		defer after.done()
		var done agent.Done
		charges := &turnCharges{}
		if after.wait(tctx) && wait(tctx, c.Delay) {
			prepare(c.Answers)
			runCtx := tool.WithCharge(r.o.Activities.watch(tctx, c.Agent), r.charger(c.Agent, charges))
			if timeout > 0 {
				var stop context.CancelFunc
				runCtx, stop = context.WithTimeout(runCtx, timeout)
				defer stop()
			}
			task.State = r.state(c.Agent)
			done = r.follow(impl.Run(runCtx, task, lt.inbox), lt.inbox, c.Agent, h, false, func(p agent.Propose) coord.Verdict {
				return r.judge(c, p)
			})
			r.keepState(c.Agent, done.State)
			if f := done.Failure; f != nil && f.Kind == coord.FailTimeout && tctx.Err() == nil {
				f.Message = fmt.Sprintf("turn timed out after %s: %s", timeout, f.Message)
			}
		} else {
			// Cancelled while waiting: no request was made.
			done.Failure = agent.FailureOf(context.Cause(tctx), c.Agent, a.Backend, a.ModelName)
		}
		cost := r.addUsage(c.Agent, done.Usage, done.CostUSD)
		r.countTools(c.Agent, ToolUse{Rounds: done.Steps})
		// What its tools charged (subagents) was counted as they did; the
		// event tells it with the turn's own usage.
		spent, spentCost := charges.total()
		spent.Add(done.Usage)
		// Usage is published as the turn ends, cancelled turns included, so
		// the logs count every token that was paid for.
		r.o.Events.Publish(event.TurnEnded{Header: h, Agent: c.Agent,
			Usage: event.Usage{InputTokens: spent.InputTokens, OutputTokens: spent.OutputTokens, CostUSD: cost + spentCost}, ToolRounds: done.Steps})
		r.send(inboxMsg{agent: c.Agent, turn: c.Turn, result: &turnResult{failure: done.Failure}})
	})
}

// taskOrder makes one agent's tasks run one after another: a task starts
// once the agent's previous task has ended (a superseded turn ends at
// once, a decided one as soon as it has read its verdict), so an agent
// never has two tasks at work — two CLI processes in one workspace — and
// each task gets the State its predecessor returned.
type taskOrder struct{ prev, this chan struct{} }

// queue is the order of the agent's task being started now; called on
// the loop.
func (r *runner) queue(id string) taskOrder {
	o := taskOrder{prev: r.lastTask[id], this: make(chan struct{})}
	r.lastTask[id] = o.this
	return o
}

// wait waits for the previous task to end; false when ctx ended first.
func (o taskOrder) wait(ctx context.Context) bool {
	if o.prev == nil {
		return ctx.Err() == nil
	}
	select {
	case <-o.prev:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

func (o taskOrder) done() { close(o.this) }

// state is what agent id kept from its last finished task (Task.State).
func (r *runner) state(id string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.states[id]
}

// keepState keeps what a finished task returned for the agent's next one;
// nil keeps what it had.
func (r *runner) keepState(id string, s []byte) {
	if s == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states[id] = s
}

// judge puts a turn's proposal to the loop and waits for the machine's
// verdict: the round trip of one Propose outcome.
func (r *runner) judge(c coord.StartTurn, p agent.Propose) coord.Verdict {
	reply := make(chan coord.Verdict, 1)
	if !r.send(inboxMsg{agent: c.Agent, turn: c.Turn, submit: &submission{seen: p.Seen, act: p.Action, reply: reply}}) {
		return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
	}
	select {
	case v := <-reply:
		return v
	case <-r.loopDone:
		return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
	}
}

// follow reads a task's outcomes to its Done, from the task's goroutine:
// it publishes what they mean as events (final: the text is the final
// answer's) and answers each proposal with judge's verdict through the
// task's inbox (judge nil: the task may not propose).
func (r *runner) follow(outcomes iter.Seq[agent.Outcome], inbox *agent.Inbox, id string, h event.Header, final bool,
	judge func(agent.Propose) coord.Verdict) agent.Done {
	var done agent.Done
	for o := range outcomes {
		switch o := o.(type) {
		case agent.Text:
			if final {
				r.o.Events.Publish(event.FinalDelta{Header: h, Agent: id, Text: o.Text})
			} else {
				r.o.Events.Publish(event.TextDelta{Header: h, Agent: id, Text: o.Text, Tool: o.Tool})
			}
		case agent.Reasoning:
			r.o.Events.Publish(event.ReasoningDelta{Header: h, Agent: id, Text: o.Text})
		case agent.ToolUsed:
			r.countTools(id, ToolUse{Calls: 1, Errors: btoi(o.IsError)})
			r.o.Events.Publish(event.ToolCalled{Header: h, Agent: id,
				Tool: o.Tool, Args: preview(o.Args), Result: preview(o.Result), IsError: o.IsError, Duration: o.Duration})
		case agent.ModelCall:
			// The request's own usage and cost, for tracing; the turn's
			// total goes out on TurnEnded, so nothing is added here.
			var cost float64
			if f := r.byID[id].Cost; f != nil {
				cost = f(o.Usage)
			}
			if o.Failure != nil {
				o.Failure.Agent = id
			}
			r.o.Events.Publish(event.ModelCalled{Header: h, Agent: id, Model: o.Model, Duration: o.Duration, Failure: o.Failure,
				Usage: event.Usage{InputTokens: o.Usage.InputTokens, OutputTokens: o.Usage.OutputTokens, CostUSD: cost}})
		case agent.ToolProgress:
			r.o.Events.Publish(event.ToolProgress{Header: h, Agent: id, Tool: o.Tool, Progress: o.Progress, Total: o.Total, Message: o.Message})
		case agent.Rejected:
			r.o.Events.Publish(event.ActionRejected{Header: h, Agent: id, Reason: o.Reason})
		case agent.Propose:
			v := coord.Verdict{Outcome: coord.Rejected, Message: "only a coordination turn may propose a workflow action"}
			if judge != nil {
				v = judge(o)
			}
			inbox.Post(agent.Verdict{Verdict: v})
		case agent.Done:
			done = o
		}
	}
	return done
}

// impl is the Agent that plays a's tasks: its own implementation, or the
// LLM agent made of its model and tools.
func (r *runner) impl(a *Agent) agent.Agent {
	if a.Impl != nil {
		return a.Impl
	}
	return &agent.LLM{ID: a.ID, Backend: a.Backend, ModelName: a.ModelName, Model: a.Model, Params: a.Params,
		FinalParams: a.FinalParams, Tools: a.Tools, PresentTools: a.PresentTools, CompressionRatio: r.o.CompressionRatio, Checklist: a.Checklist}
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

// addUsage records a finished task's usage and returns its cost: its
// model's price from the catalogue (Agent.Cost) or, when the model has
// none, what the agent reported it cost (agent.Done.CostUSD).
func (r *runner) addUsage(id string, u llm.Usage, reported float64) float64 {
	c := reported
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
