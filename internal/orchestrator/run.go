package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// Run coordinates the team on question until a final answer, a failure, the
// deadline or cancellation of ctx. It returns once every goroutine it
// started has ended.
func Run(ctx context.Context, question string, o Options) *Result {
	o.defaults()
	r := &runner{o: o, question: question, byID: map[string]*Agent{}, usage: map[string]*llm.Usage{}}
	for i := range o.Agents {
		a := &o.Agents[i]
		r.byID[a.ID] = a
		r.usage[a.ID] = &llm.Usage{}
	}
	start := o.Now()
	r.deadline = start.Add(o.Timeout)
	ids := make([]string, len(o.Agents))
	for i, a := range o.Agents {
		ids[i] = a.ID
	}
	r.publish(event.Event{Type: event.RunStarted, Text: question, Agents: ids})
	res := r.attempts(ctx)
	r.wg.Wait()
	res.Duration = o.Now().Sub(start)
	res.Attempts = r.attempt
	res.Usage = map[string]llm.Usage{}
	r.mu.Lock()
	for id, u := range r.usage {
		res.Usage[id] = *u
	}
	r.mu.Unlock()
	fin := event.Event{Type: event.RunFinished, Status: string(res.Status), Agent: res.Winner}
	if res.Err != nil {
		fin.Err = res.Err.Error()
	}
	r.publish(fin)
	return res
}

type runner struct {
	o        Options
	question string
	byID     map[string]*Agent
	deadline time.Time
	wg       sync.WaitGroup

	// Owned by the loop goroutine.
	m        *coord.Machine
	attempt  int
	epoch    int
	feedback string
	live     map[coord.TurnID]*liveTurn

	mu    sync.Mutex // guards usage: turns add to it as they end
	usage map[string]*llm.Usage
}

// liveTurn is an in-flight turn as the loop sees it.
type liveTurn struct {
	agent   string
	cancel  context.CancelCauseFunc
	updates chan coord.StartTurn // inject policy only
}

// inboxMsg is how a turn goroutine talks to the loop.
type inboxMsg struct {
	agent  string
	turn   coord.TurnID
	submit *submission   // a proposed action awaiting a verdict
	result *agent.Result // the turn ended
}

type submission struct {
	seen  int
	act   coord.Action
	reply chan coord.Verdict
}

var errSuperseded = errors.New("turn superseded by a newer answer")

func (r *runner) publish(e event.Event) {
	if e.Attempt == 0 {
		e.Attempt = r.attempt
	}
	e.Epoch = r.epoch
	r.o.Events.Publish(e)
}

// attempts runs orchestration attempts until one is accepted by
// post-evaluation (or there is nothing to evaluate).
func (r *runner) attempts(ctx context.Context) *Result {
	for {
		r.attempt++
		res, present := r.coordinate(ctx)
		if present == nil {
			return res
		}
		r.presentFinal(ctx, res, present)
		if ctx.Err() != nil {
			// Interrupted while presenting: the winner's stored answer is
			// kept (res.Final, and in the logs), but the run did not finish.
			res.Status, res.Err = Interrupted, fmt.Errorf("interrupted during the final presentation: %w", context.Cause(ctx))
			return res
		}
		if r.o.MaxRestarts == 0 || r.attempt > r.o.MaxRestarts {
			return res
		}
		ev := r.postEvaluate(ctx, res)
		if !ev.Restart {
			return res
		}
		r.feedback = agent.FeedbackBlock(ev.Reason, ev.Instructions, res.Final)
		r.publish(event.Event{Type: event.RunRestarted, Agent: res.Winner, Reason: ev.Reason, Text: ev.Instructions})
	}
}

// coordinate runs one attempt's coordination loop. It returns the Present
// command on success, or nil with a final Result.
func (r *runner) coordinate(ctx context.Context) (*Result, *coord.Present) {
	ids := make([]string, len(r.o.Agents))
	for i, a := range r.o.Agents {
		ids[i] = a.ID
	}
	r.m = coord.New(coord.Config{
		Agents: ids, MaxAnswers: r.o.MaxAnswers, Novelty: r.o.Novelty, Inject: r.o.Inject,
		IndependentFirstAnswer: !r.o.DependentFirstAnswer, FailureBudget: r.o.FailureBudget, Hold: !r.o.Eager,
	})
	r.epoch = 0
	r.live = map[coord.TurnID]*liveTurn{}
	inbox := make(chan inboxMsg)
	loopDone := make(chan struct{})
	defer func() {
		close(loopDone)
		for _, t := range r.live {
			t.cancel(errors.New("coordination ended"))
		}
	}()

	timer := time.NewTimer(r.deadline.Sub(r.o.Now()))
	defer timer.Stop()
	var end coord.Command
	apply := func(cmds []coord.Command) {
		for _, c := range cmds {
			if e := r.apply(ctx, c, inbox, loopDone); e != nil {
				end = e
			}
		}
	}
	apply(r.m.Start())
	deadline := false
	for end == nil {
		select {
		case <-ctx.Done():
			return r.result(Interrupted, fmt.Errorf("interrupted: %w", context.Cause(ctx))), nil
		case <-timer.C:
			deadline = true
			r.publish(event.Event{Type: event.Timeout, Reason: fmt.Sprintf("run deadline of %s passed", r.o.Timeout)})
			apply(r.m.Timeout())
		case msg := <-inbox:
			cmds := r.handle(msg)
			// Drain what else is already waiting before acting, so a turn
			// that one answer starts and the next answer cancels is never
			// launched at all (no request, no prompt tokens).
			for more := true; more && !r.m.Done(); {
				select {
				case msg := <-inbox:
					cmds = append(cmds, r.handle(msg)...)
				default:
					more = false
				}
			}
			apply(coalesce(cmds))
		}
	}
	switch c := end.(type) {
	case coord.Fail:
		if c.Timeout {
			return r.result(TimedOut, errors.New(c.Reason)), nil
		}
		return r.result(Failed, errors.New(c.Reason)), nil
	case coord.Present:
		res := r.result(Completed, nil)
		res.Winner, res.How, res.Tally, res.Deadline = c.Winner, c.How, c.Tally, deadline
		r.publish(event.Event{Type: event.WinnerSelected, Agent: c.Winner, Votes: c.Tally, Reason: c.How, Label: c.Answer.Label})
		return res, &c
	}
	panic("unreachable")
}

func (r *runner) result(s Status, err error) *Result {
	return &Result{Status: s, Err: err, Answers: r.m.Answers()}
}

// coalesce drops the turns that a batch of commands both starts and
// cancels, and folds injected answer sets into turns not yet launched.
func coalesce(cmds []coord.Command) []coord.Command {
	started := map[coord.TurnID]int{} // turn → index of its StartTurn in out
	dropped := map[coord.TurnID]bool{}
	var out []coord.Command
	for _, c := range cmds {
		switch c := c.(type) {
		case coord.StartTurn:
			started[c.Turn] = len(out)
		case coord.CancelTurn:
			if i, ok := started[c.Turn]; ok {
				out[i], dropped[c.Turn] = nil, true
				continue
			}
		case coord.Inject:
			if i, ok := started[c.Turn]; ok {
				st := out[i].(coord.StartTurn)
				st.Epoch, st.Answers = c.Epoch, c.Answers
				out[i] = st
				continue
			}
		}
		out = append(out, c)
	}
	kept := out[:0]
	for _, c := range out {
		if c != nil {
			kept = append(kept, c)
		}
	}
	return kept
}

// handle feeds one message from a turn into the machine.
func (r *runner) handle(msg inboxMsg) []coord.Command {
	if s := msg.submit; s != nil {
		v, cmds := r.m.Submit(msg.agent, msg.turn, s.seen, s.act)
		s.reply <- v
		switch {
		case v.Outcome == coord.Accepted && s.act.Kind == coord.ActNewAnswer:
			r.epoch = r.m.Epoch()
			r.publish(event.Event{Type: event.AnswerAccepted, Agent: msg.agent, Text: strings.TrimSpace(s.act.Content),
				Label: fmt.Sprintf("%s.%d", v.Label, r.m.AnswerCount(msg.agent))})
		case v.Outcome == coord.Accepted:
			r.publish(event.Event{Type: event.VoteAccepted, Agent: msg.agent, Target: v.Target, TargetLabel: v.Label, Reason: s.act.Reason})
		case v.Outcome == coord.Stale && s.act.Kind == coord.ActVote && len(cmds) > 0:
			r.publish(event.Event{Type: event.ActionRejected, Agent: msg.agent, Reason: "stale vote: " + v.Message})
		}
		return cmds
	}
	t := r.live[msg.turn]
	delete(r.live, msg.turn)
	res := msg.result
	if res.Err == nil || t == nil {
		return nil // accepted or stale: the machine already moved on
	}
	cmds := r.m.TurnFailed(msg.agent, msg.turn, res.Err.Error())
	if len(cmds) > 0 { // the failure counted (the turn was still current)
		typ := event.TurnFailed
		if errors.Is(res.Err, context.DeadlineExceeded) {
			typ = event.Timeout
		}
		r.publish(event.Event{Type: typ, Agent: msg.agent, Err: res.Err.Error()})
	}
	return cmds
}

// apply carries out one command; it returns the command when it ends coordination.
func (r *runner) apply(ctx context.Context, c coord.Command, inbox chan inboxMsg, loopDone chan struct{}) coord.Command {
	switch c := c.(type) {
	case coord.StartTurn:
		r.startTurn(ctx, c, inbox, loopDone)
	case coord.CancelTurn:
		if t := r.live[c.Turn]; t != nil {
			t.cancel(errSuperseded)
			delete(r.live, c.Turn)
		}
		if c.Cause != "" {
			r.publish(event.Event{Type: event.TurnRestarted, Agent: c.Agent, Target: c.Cause, Reason: c.Reason})
		}
	case coord.Inject:
		if t := r.live[c.Turn]; t != nil {
			select { // keep only the newest answer set
			case <-t.updates:
			default:
			}
			t.updates <- coord.StartTurn{Agent: c.Agent, Turn: c.Turn, Epoch: c.Epoch, Answers: c.Answers}
		}
	case coord.AgentFailed:
		r.publish(event.Event{Type: event.AgentFailed, Agent: c.Agent, Err: c.Err, Reason: fmt.Sprintf("%d consecutive failed turns", c.Failures)})
	case coord.Present, coord.Fail:
		return c
	}
	return nil
}

func (r *runner) startTurn(ctx context.Context, c coord.StartTurn, inbox chan inboxMsg, loopDone chan struct{}) {
	a, attempt := r.byID[c.Agent], r.attempt
	tctx, cancel := context.WithCancelCause(ctx)
	lt := &liveTurn{agent: c.Agent, cancel: cancel}
	if r.o.Inject {
		lt.updates = make(chan coord.StartTurn, 1)
	}
	r.live[c.Turn] = lt
	user := agent.UserMessage(r.question, r.feedback, c.Answers)
	labels := make([]string, len(c.Answers))
	for i, x := range c.Answers {
		labels[i] = x.Label
	}
	r.publish(event.Event{Type: event.TurnStarted, Agent: c.Agent, Text: user, Labels: labels})
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
		System:  agent.SystemPrompt(a.SystemMessage, r.o.VotingSensitivity, r.o.Novelty, r.o.Now()),
		User:    user,
		Answers: c.Answers,
		Epoch:   c.Epoch,
		Emit:    deltas{b: r.o.Events, agent: c.Agent, typ: event.TextDelta, attempt: attempt, epoch: c.Epoch},
		Updates: lt.updates,
		Judge: func(seen int, act coord.Action) coord.Verdict {
			reply := make(chan coord.Verdict, 1)
			if !send(inboxMsg{agent: c.Agent, turn: c.Turn, submit: &submission{seen: seen, act: act, reply: reply}}) {
				return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
			}
			return <-reply
		},
		OnReject: func(reason string) {
			r.o.Events.Publish(event.Event{Type: event.ActionRejected, Agent: c.Agent, Reason: reason, Attempt: attempt, Epoch: c.Epoch})
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
		r.addUsage(c.Agent, res.Usage)
		// Usage is published as the turn ends, cancelled turns included, so
		// the logs count every token that was paid for.
		r.o.Events.Publish(event.Event{Type: event.TurnEnded, Agent: c.Agent, Attempt: attempt, Epoch: c.Epoch,
			InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
		send(inboxMsg{agent: c.Agent, turn: c.Turn, result: &res})
	})
}

func (r *runner) addUsage(id string, u llm.Usage) {
	r.mu.Lock()
	r.usage[id].Add(u)
	r.mu.Unlock()
}

// deltas forwards streamed text to the event broker. Turn goroutines
// publish directly (not through the loop), so they carry the attempt and the
// epoch of the answer set their turn saw.
type deltas struct {
	b              *event.Broker
	agent          string
	typ            event.Type
	attempt, epoch int
}

func (d deltas) Text(s string)      { d.publish(d.typ, s) }
func (d deltas) Reasoning(s string) { d.publish(event.ReasoningDelta, s) }

func (d deltas) publish(t event.Type, s string) {
	d.b.Publish(event.Event{Type: t, Agent: d.agent, Text: s, Attempt: d.attempt, Epoch: d.epoch})
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
