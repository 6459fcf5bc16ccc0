package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

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
			r.publish(event.Timeout{Reason: fmt.Sprintf("run deadline of %s passed", r.o.Timeout)})
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
			if why := r.overBudget(); why != "" && end == nil {
				r.publish(event.BudgetExceeded{Reason: why})
				apply(r.m.Stop("budget", false))
			}
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
		r.publish(event.WinnerSelected{Agent: c.Winner, Votes: c.Tally, How: c.How, Label: r.answerRef(c.Answer).Answer, Answers: r.answerRefs(c.Answers)})
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
			r.publish(event.AnswerAccepted{Agent: msg.agent, Content: strings.TrimSpace(s.act.Content),
				Label: r.currentRef(msg.agent).Answer, AnonLabel: v.Label, Answers: r.answerRefs(r.m.Answers())})
		case v.Outcome == coord.Accepted:
			r.publish(event.VoteAccepted{Agent: msg.agent, Target: v.Target, TargetLabel: v.Label, TargetAnswer: r.currentRef(v.Target).Answer, Reason: s.act.Reason})
		case v.Outcome == coord.Stale && s.act.Kind == coord.ActVote && len(cmds) > 0:
			r.publish(event.ActionRejected{Agent: msg.agent, Reason: "stale vote: " + v.Message})
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
		var e event.Event = event.TurnFailed{Agent: msg.agent, Err: res.Err.Error()}
		if errors.Is(res.Err, context.DeadlineExceeded) {
			e = event.Timeout{Agent: msg.agent, Err: res.Err.Error()}
		}
		r.publish(e)
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
			r.publish(event.TurnRestarted{Agent: c.Agent, Cause: c.Cause, Reason: c.Reason})
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
		r.publish(event.AgentFailed{Agent: c.Agent, Err: c.Err, Reason: fmt.Sprintf("%d consecutive failed turns", c.Failures)})
	case coord.Present, coord.Fail:
		return c
	}
	return nil
}
