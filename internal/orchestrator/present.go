package orchestrator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/redact"
)

// startCall runs the presentation, evaluation or direct call of agent id,
// task, in its own goroutine; its result comes back to the loop. The
// machine bounds it (the deadline, the presentation grace) with
// CancelCall, not a context deadline, so that the rule lives in one place.
// before runs first, in that goroutine.
func (r *runner) startCall(ctx context.Context, id string, task agent.Task, before func(), result func(agent.Done) coord.Input) {
	cctx, cancel := context.WithCancelCause(ctx)
	r.call = cancel
	h := event.Header{Attempt: r.attempt, Epoch: r.epoch} // read here, on the loop goroutine
	final := task.Kind == agent.TaskPresent || task.Kind == agent.TaskDirect
	impl := r.impl(r.byID[id])
	after := r.queue(id)
	r.wg.Go(func() {
		defer cancel(nil)
		defer after.done()
		after.wait(cctx) // a cancelled call still reports, as a failure of its own
		if before != nil {
			before()
		}
		inbox := agent.NewInbox()
		task.State = r.state(id)
		done := r.follow(impl.Run(r.o.Activities.watch(cctx, id), task, inbox), inbox, id, h, final, nil)
		r.keepState(id, done.State)
		if f := done.Failure; f != nil {
			f.Agent, f.Message = id, redact.String(f.Message)
		}
		res := callResult{in: result(done), usage: done.Usage}
		if p, ok := res.in.(coord.Presented); ok && p.Err == "" {
			res.calls = done.ToolCalls
		}
		res.cost = r.addUsage(id, res.usage, done.CostUSD)
		r.send(inboxMsg{agent: id, call: &res})
	})
}

// startPresentation has the winner write the final answer.
func (r *runner) startPresentation(ctx context.Context, p coord.Present) {
	a := r.byID[p.Winner]
	prepare := r.beforeTurn(a)
	system := agent.PresentationSystem(a.SystemMessage)
	user := agent.HistoryBlock(r.o.History) + agent.PresentationUser(r.question, p.Winner, voteSummary(p.Winner, p.Tally, p.How, p.Votes), p.Answers)
	if r.o.Decomposition {
		system, user = r.decompositionPresentation(a, p)
	}
	user = withFinalInstruction(user, r.o.FinalInstruction)
	r.publish(event.FinalStarted{Agent: p.Winner, Prompt: system + "\n\n" + user, Mode: "presentation"})
	task := agent.Task{Kind: agent.TaskPresent, Question: r.question, System: system, User: user,
		Answers: p.Answers, ClientTools: r.o.ClientTools}
	var off func()
	r.startCall(ctx, p.Winner, task, func() {
		prepare(p.Answers)
		if a.OnPresent != nil {
			a.OnPresent(true)
			off = func() { a.OnPresent(false) }
		}
	}, func(d agent.Done) coord.Input {
		if off != nil {
			off()
		}
		return presented(d)
	})
}

// startDirect has the only agent answer in one plain call (Settings.Direct):
// no workflow tools, no vote, no presentation. The answer streams as the
// final answer.
func (r *runner) startDirect(ctx context.Context, c coord.AnswerDirect) {
	a := r.byID[c.Agent]
	user := withFinalInstruction(agent.HistoryBlock(r.o.History)+r.question, r.o.FinalInstruction)
	r.publish(event.FinalStarted{Agent: a.ID, Prompt: strings.TrimSpace(a.SystemMessage + "\n\n" + user), Mode: "direct"})
	task := agent.Task{Kind: agent.TaskDirect, Question: r.question, System: a.SystemMessage, User: user, ClientTools: r.o.ClientTools}
	r.startCall(ctx, a.ID, task, nil, presented)
}

// withFinalInstruction adds Options.FinalInstruction to a final prompt.
func withFinalInstruction(user, instruction string) string {
	if instruction == "" {
		return user
	}
	return user + "\n\n" + instruction
}

// presented is the machine's input for a finished presentation or direct
// call.
func presented(d agent.Done) coord.Input {
	if f := d.Failure; f != nil {
		return coord.Presented{Err: f.Message, Failure: f}
	}
	return coord.Presented{Text: d.Text, ToolCalls: len(d.ToolCalls)}
}

// startEvaluation has the winner check the final answer.
func (r *runner) startEvaluation(ctx context.Context, c coord.Evaluate) {
	a := r.byID[c.Agent]
	task := agent.Task{Kind: agent.TaskEvaluate, Question: r.question, Final: c.Final,
		System: agent.PresentationSystem(a.SystemMessage), User: agent.PostEvalUser(r.question, c.Final)}
	r.startCall(ctx, c.Agent, task, nil, func(d agent.Done) coord.Input {
		// An evaluation that failed or said nothing counts as submit: it
		// must not throw away a good answer.
		if ev := d.Evaluation; ev != nil {
			return coord.Evaluated{Agent: c.Agent, Restart: ev.Restart, Reason: ev.Reason, Instructions: ev.Instructions}
		}
		return coord.Evaluated{Agent: c.Agent}
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
