package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// step feeds one input to the machine, traces it, and publishes what the
// input and its commands mean for observers.
func (r *runner) step(in coord.Input) []coord.Command {
	cmds := r.m.Step(in)
	if r.o.Trace != nil {
		r.o.Trace(in, cmds)
	}
	r.attempt, r.epoch = r.m.Attempt(), r.m.Epoch()
	if _, ok := in.(coord.Start); ok {
		// Seeded answers are the answer set from the start: observers
		// (logs, sessions) see them accepted before any turn begins.
		for _, a := range r.m.Answers() {
			r.publish(event.AnswerAccepted{Agent: a.Agent, Content: a.Content, Label: r.answerRef(a).Answer, AnonLabel: a.Label,
				Answers: r.answerRefs(r.m.Answers())})
		}
		// So are seeded votes: the resumed turn's last epoch.
		for _, v := range r.m.Votes() {
			r.publish(event.VoteAccepted{Agent: v.Voter, Target: v.Target, TargetLabel: v.Label,
				TargetAnswer: r.currentRef(v.Target).Answer, Reason: v.Reason})
		}
	}
	if p, ok := in.(coord.Proposed); ok && len(cmds) > 0 {
		v := cmds[0].(coord.Reply).Verdict
		switch {
		case v.Outcome == coord.Accepted && p.Action.Kind == coord.ActNewAnswer:
			var ws string
			if r.o.Snapshot != nil {
				ws = r.o.Snapshot(p.Agent, r.currentRef(p.Agent).Answer)
			}
			r.publish(event.AnswerAccepted{Agent: p.Agent, Content: strings.TrimSpace(p.Action.Content),
				Label: r.currentRef(p.Agent).Answer, AnonLabel: v.Label, Answers: r.answerRefs(r.m.Answers()), Workspace: ws})
		case v.Outcome == coord.Accepted:
			r.publish(event.VoteAccepted{Agent: p.Agent, Target: v.Target, TargetLabel: v.Label, TargetAnswer: r.currentRef(v.Target).Answer, Reason: p.Action.Reason})
		case v.Outcome == coord.Stale && p.Action.Kind == coord.ActVote && len(cmds) > 1:
			r.publish(event.ActionRejected{Agent: p.Agent, Reason: "stale vote: " + v.Message})
		}
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
			r.publish(event.BudgetExceeded{Reason: why})
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
		var e event.Event = event.TurnFailed{Agent: msg.agent, Err: f.Message, Failure: f}
		if f.Kind == coord.FailTimeout {
			e = event.Timeout{Agent: msg.agent, Err: f.Message, Failure: f}
		}
		r.publish(e)
		return append(cmds, r.step(coord.TurnFailed{Agent: msg.agent, Turn: msg.turn, Err: f.Message,
			CircuitOpen: f.Kind == coord.FailCircuitOpen, Failure: f})...)
	case msg.call != nil:
		r.call, r.lastCall = nil, nil
		switch in := msg.call.in.(type) {
		case coord.Presented:
			r.lastCall = msg.call
			if in.Err == "" {
				r.toolCalls = msg.call.calls
			}
		case coord.Evaluated:
			verdict := "submit"
			if in.Restart {
				verdict = "restart"
			}
			r.publish(event.PostEvaluation{Agent: msg.agent, Verdict: verdict, Reason: in.Reason,
				Usage: event.Usage{InputTokens: msg.call.usage.InputTokens, OutputTokens: msg.call.usage.OutputTokens, CostUSD: msg.call.cost}})
		}
		return append(cmds, r.step(msg.call.in)...)
	case msg.timer == coord.TimerDeadline:
		delete(r.timers, msg.timer)
		r.publish(event.Timeout{Reason: fmt.Sprintf("run deadline of %s passed", r.o.Timeout)})
		return append(cmds, r.step(coord.DeadlinePassed{})...)
	case msg.timer == coord.TimerGrace:
		delete(r.timers, msg.timer)
		return append(cmds, r.step(coord.GraceExpired{})...)
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
		case coord.AgentFailed:
			r.publish(event.AgentFailed{Agent: c.Agent, Err: c.Err, Reason: c.Reason, Failure: c.Failure})
		case coord.Present:
			r.publish(event.WinnerSelected{Agent: c.Winner, Votes: c.Tally, How: c.How, Label: r.answerRef(c.Answer).Answer, Answers: r.answerRefs(c.Answers)})
			if c.Skip == "" {
				r.startPresentation(ctx, c)
			}
		case coord.AnswerDirect:
			r.startDirect(ctx, c)
		case coord.Final:
			e := event.FinalAnswer{Agent: c.Agent, Text: c.Text, Reason: c.Reason}
			if lc := r.lastCall; lc != nil {
				// The final answer carries the cost of the call that made it.
				e.Usage = event.Usage{InputTokens: lc.usage.InputTokens, OutputTokens: lc.usage.OutputTokens, CostUSD: lc.cost}
				r.lastCall = nil
			}
			r.publish(e)
		case coord.Evaluate:
			r.startEvaluation(ctx, c)
		case coord.Restart:
			r.feedback = agentFeedback(c)
			r.publish(event.RunRestarted{Header: event.Header{Attempt: c.Attempt - 1}, Agent: c.Agent, Reason: c.Reason, Instructions: c.Instructions})
		case coord.CancelCall:
			if r.call != nil {
				r.call(errors.New(c.Reason))
				r.call = nil
			}
		case coord.SetTimer:
			r.setTimer(c)
		case coord.Finish:
			fin = &c
		}
	}
	return fin
}

// setTimer arms a timer whose firing comes back to the loop as a message.
func (r *runner) setTimer(c coord.SetTimer) {
	if old := r.timers[c.Timer]; old != nil && old.Stop() {
		r.wg.Done()
	}
	r.wg.Add(1)
	r.timers[c.Timer] = time.AfterFunc(c.After, func() {
		defer r.wg.Done()
		r.send(inboxMsg{timer: c.Timer})
	})
}
