package orchestrator

import (
	"context"
	"errors"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/redact"
)

// drive is the run's loop: it feeds the machine one input at a time and
// carries out the commands it returns, until Finish.
func (r *runner) drive(ctx context.Context) *Result {
	defer r.stopAll()
	if crit, note := r.generateCriteria(ctx); len(crit) > 0 {
		r.step(coord.CriteriaSet{Criteria: crit})
	} else if note != "" {
		r.publish(event.ActionRejected{Agent: r.o.Agents[0].ID, Reason: note})
	}
	if ps, note := r.generatePersonas(ctx); len(ps) > 0 {
		r.personas = ps
		if note != "" {
			r.publish(event.ActionRejected{Agent: r.o.Agents[0].ID, Reason: note})
		}
	}
	r.assignSubtasks(ctx)
	cmds := r.step(coord.Start{})
	for {
		if fin := r.exec(ctx, coord.Coalesce(cmds)); fin != nil {
			return r.result(ctx, *fin)
		}
		select {
		case <-ctx.Done():
			cmds = r.step(coord.Interrupted{Reason: context.Cause(ctx).Error()})
			continue
		case msg := <-r.inbox:
			if ctx.Err() != nil {
				// Both were ready: what the cancellation made fail (the
				// presentation's call, a turn) must read as the
				// interruption it is, not as a failure to fall back from.
				// A message left unread is answered by stopAll.
				cmds = r.step(coord.Interrupted{Reason: context.Cause(ctx).Error()})
				continue
			}
			cmds = r.handle(msg)
		}
		// Drain what else is already waiting before acting, so a turn that
		// one answer starts and the next answer cancels is never launched
		// at all (no request, no prompt tokens): see coord.Coalesce.
		for more := true; more && !r.m.Done(); {
			select {
			case msg := <-r.inbox:
				cmds = append(cmds, r.handle(msg)...)
			default:
				more = false
			}
		}
	}
}

// stopAll ends what the run still has going: turns and calls are
// cancelled, timers stopped, and late messages are refused.
func (r *runner) stopAll() {
	close(r.loopDone)
	for _, t := range r.live {
		t.cancel(errors.New("the run ended"))
	}
	if r.call != nil {
		r.call(errors.New("the run ended"))
	}
	for _, t := range r.timers {
		if t.Stop() {
			r.wg.Done() // its callback will never run
		}
	}
}

// step feeds one input to the machine, traces it (the run's replay log
// is written before anything acts on the step), and publishes the
// decision events the step makes (derive), with what only the running
// process adds to them: the snapshot of an accepted answer's workspace,
// the token usage of the call whose result this step is (callUsage).
func (r *runner) step(in coord.Input) []coord.Command {
	pre := event.Header{Attempt: r.attempt, Epoch: r.epoch}
	cmds := r.m.Step(in)
	if r.o.Trace != nil {
		r.o.Trace(in, cmds)
	}
	r.attempt, r.epoch = r.m.Attempt(), r.m.Epoch()
	for _, e := range derive(in, cmds, r.m, r.pos, pre) {
		switch x := e.(type) {
		case event.AnswerAccepted:
			if _, proposed := in.(coord.Proposed); proposed && r.o.Snapshot != nil {
				x.Workspace = r.o.Snapshot(x.Agent, x.Label)
				e = x
			}
		case event.PostEvaluation:
			x.Usage = r.callUsage
			e = x
		case event.FinalAnswer:
			// The final answer carries the cost of the call that made it.
			x.Usage = r.callUsage
			e = x
		}
		r.o.Events.Publish(e)
	}
	return cmds
}

// handle turns one message into inputs for the machine. A spend that
// crossed the budget is fed first: usage is added as calls end, before
// their results are sent, and a post-evaluation must not start after it.
func (r *runner) handle(msg inboxMsg) []coord.Command {
	var cmds []coord.Command
	if !r.budgetHit {
		if why := r.overBudget(); why != "" {
			r.budgetHit = true
			cmds = r.step(coord.BudgetSpent{Reason: why})
		}
	}
	switch {
	case msg.submit != nil:
		r.replies[msg.turn] = msg.submit.reply
		return append(cmds, r.step(coord.Proposed{Agent: msg.agent, Turn: msg.turn, Seen: msg.submit.seen, Action: msg.submit.act})...)
	case msg.result != nil:
		_, live := r.live[msg.turn]
		delete(r.live, msg.turn)
		f := msg.result.failure
		if f == nil || !live {
			return cmds // accepted or superseded: the machine already moved on
		}
		// The failure's text goes to events, logs and the machine masked: a
		// provider's error already is, a tool's or a wrapper's may not be.
		f.Agent, f.Message = msg.agent, redact.String(f.Message)
		return append(cmds, r.step(coord.TurnFailed{Agent: msg.agent, Turn: msg.turn, Err: f.Message,
			CircuitOpen: f.Kind == coord.FailCircuitOpen, Failure: f})...)
	case msg.call != nil:
		r.call = nil
		if in, ok := msg.call.in.(coord.Presented); ok && in.Err == "" {
			r.toolCalls = msg.call.calls
		}
		r.callUsage = event.Usage{InputTokens: msg.call.usage.InputTokens, OutputTokens: msg.call.usage.OutputTokens, CostUSD: msg.call.cost}
		defer func() { r.callUsage = event.Usage{} }()
		return append(cmds, r.step(msg.call.in)...)
	case msg.timer == coord.TimerDeadline:
		delete(r.timers, timerKey{timer: msg.timer})
		return append(cmds, r.step(coord.DeadlinePassed{})...)
	case msg.timer == coord.TimerGrace:
		delete(r.timers, timerKey{timer: msg.timer})
		return append(cmds, r.step(coord.GraceExpired{})...)
	case msg.round != nil:
		t := msg.round
		delete(r.timers, timerKey{t.Timer, t.Agent})
		if _, live := r.live[t.Turn]; !live {
			return cmds // the turn ended before its round did: nothing to log
		}
		return append(cmds, r.step(coord.RoundTimeUp{Agent: t.Agent, Turn: t.Turn, Stage: t.Stage})...)
	}
	return cmds
}

// exec carries out a batch of commands; it returns the Finish, if any,
// once every command of the batch is done (a turn waiting for its Reply
// gets it even when the run ends).
func (r *runner) exec(ctx context.Context, cmds []coord.Command) *coord.Finish {
	var fin *coord.Finish
	for _, c := range cmds {
		switch c := c.(type) {
		case coord.Reply:
			if ch := r.replies[c.Turn]; ch != nil {
				ch <- c.Verdict
				delete(r.replies, c.Turn)
			}
		case coord.StartTurn:
			r.startTurn(ctx, c)
		case coord.CancelTurn:
			if t := r.live[c.Turn]; t != nil {
				t.cancel(errSuperseded)
				delete(r.live, c.Turn)
			}
			if c.Cause != "" {
				r.publish(event.TurnRestarted{Agent: c.Agent, Cause: c.Cause, Reason: c.Reason})
			}
		case coord.Inject:
			if t := r.live[c.Turn]; t != nil {
				// The live turn reads its view as it goes: laid out
				// before the update reaches it. The inbox keeps only the
				// newest answer set.
				r.beforeTurn(r.byID[c.Agent])(c.Answers)
				t.inbox.Post(agent.Update{Epoch: c.Epoch, Answers: c.Answers})
			}
		case coord.Present:
			if c.Skip == "" {
				r.startPresentation(ctx, c)
			}
		case coord.AnswerDirect:
			r.startDirect(ctx, c)
		case coord.Evaluate:
			r.startEvaluation(ctx, c)
		case coord.Restart:
			r.feedback = agentFeedback(c)
		case coord.CancelCall:
			if r.call != nil {
				r.call(errors.New(c.Reason))
				r.call = nil
			}
		case coord.SetTimer:
			r.setTimer(c)
		case coord.WrapUp:
			if t := r.live[c.Turn]; t != nil {
				t.inbox.Post(agent.WrapUp{Hard: c.Hard, Message: c.Message})
			}
		case coord.Finish:
			fin = &c
		}
	}
	return fin
}

// setTimer arms a timer whose firing comes back to the loop as a message.
func (r *runner) setTimer(c coord.SetTimer) {
	key := timerKey{timer: c.Timer}
	msg := inboxMsg{timer: c.Timer}
	if c.Timer == coord.TimerRound {
		key.agent, msg.round = c.Agent, &c
	}
	if old := r.timers[key]; old != nil && old.Stop() {
		r.wg.Done()
	}
	r.wg.Add(1)
	r.timers[key] = time.AfterFunc(c.After, func() {
		defer r.wg.Done()
		r.send(msg)
	})
}
