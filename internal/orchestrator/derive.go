package orchestrator

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// derive is what one step of the machine means for observers: the
// decision events of the step — answers and votes accepted, stale votes,
// failed turns and agents, the deadline, the budget, the winner, the final
// answer, post-evaluation and restarts — as a pure function of the step
// (its input and commands), the machine's state after it and the
// agents' config positions. The run publishes them as it steps; a replay
// of the run's log (massgen replay --events) derives the same events from
// the log alone. What only the running process knows (a snapshot's path,
// a call's token usage) the caller adds; what depends on carrying the
// commands out (a turn started or restarted, the presentation's prompt)
// is published as they are carried out.
//
// pre is the attempt and epoch before the step: events that report the
// input (a failed turn, the deadline, the budget, a post-evaluation
// verdict) belong to it; those that report a decision, to the state after.
func derive(in coord.Input, cmds []coord.Command, m *coord.Machine, pos map[string]int, pre event.Header) []event.Event {
	post := event.Header{Attempt: m.Attempt(), Epoch: m.Epoch()}
	ref := func(a coord.Answer) event.AnswerRef { return answerRef(pos, a) }
	refs := func(as []coord.Answer) []event.AnswerRef { return answerRefs(pos, as) }
	current := func(id string) event.AnswerRef {
		for _, a := range m.Answers() {
			if a.Agent == id {
				return ref(a)
			}
		}
		return event.AnswerRef{}
	}
	var out []event.Event
	at := func(h event.Header, e event.Event) { out = append(out, event.At(e, h.Attempt, h.Epoch)) }

	switch in := in.(type) {
	case coord.Start:
		// Seeded answers and votes (a resumed turn) are the state from the
		// start: observers see them accepted before any turn begins.
		for _, a := range m.Answers() {
			at(post, event.AnswerAccepted{Agent: a.Agent, Content: a.Content, Label: ref(a).Answer, AnonLabel: a.Label, Answers: refs(m.Answers())})
		}
		for _, v := range m.Votes() {
			at(post, event.VoteAccepted{Agent: v.Voter, Target: v.Target, TargetLabel: v.Label, TargetAnswer: current(v.Target).Answer, Reason: v.Reason})
		}
	case coord.Proposed:
		if len(cmds) == 0 {
			break
		}
		v := cmds[0].(coord.Reply).Verdict
		switch {
		case in.Action.Kind == coord.ActChecklist || in.Action.Kind == coord.ActDraft:
			// A step inside the turn: the tool call's event tells it.
		case v.Outcome == coord.Accepted && in.Action.Kind == coord.ActNewAnswer:
			at(post, event.AnswerAccepted{Agent: in.Agent, Content: strings.TrimSpace(in.Action.Content),
				Label: current(in.Agent).Answer, AnonLabel: v.Label, Answers: refs(m.Answers())})
			for _, s := range autoStops(m) {
				at(post, event.VoteAccepted{Agent: s.Voter, Target: s.Target, TargetLabel: s.Label, TargetAnswer: current(s.Target).Answer,
					Reason: voteReason(coord.Action{Kind: coord.ActStop, Label: s.Stop, Reason: s.Reason})})
			}
		case v.Outcome == coord.Accepted:
			at(post, event.VoteAccepted{Agent: in.Agent, Target: v.Target, TargetLabel: v.Label, TargetAnswer: current(v.Target).Answer, Reason: voteReason(in.Action)})
		case v.Outcome == coord.Stale && in.Action.Kind == coord.ActVote && len(cmds) > 1:
			at(post, event.ActionRejected{Agent: in.Agent, Reason: "stale vote: " + v.Message})
		}
	case coord.TurnFailed:
		f := in.Failure
		if f != nil && f.Kind == coord.FailTimeout {
			at(pre, event.Timeout{Agent: in.Agent, Err: in.Err, Failure: f})
		} else {
			at(pre, event.TurnFailed{Agent: in.Agent, Err: in.Err, Failure: f})
		}
	case coord.RoundTimeUp:
		// The cutoff ends the turn as a timed-out turn; the soft and hard
		// stages only reach the model (coord.WrapUp).
		for _, c := range cmds {
			if c, ok := c.(coord.CancelTurn); ok && in.Stage == coord.RoundCutoff {
				at(pre, event.Timeout{Agent: in.Agent, Err: c.Reason,
					Failure: &coord.Failure{Kind: coord.FailTimeout, Agent: in.Agent, Message: c.Reason}})
			}
		}
	case coord.BudgetSpent:
		at(pre, event.BudgetExceeded{Reason: in.Reason})
	case coord.DeadlinePassed:
		at(pre, event.Timeout{Reason: fmt.Sprintf("run deadline of %s passed", m.Settings().Timeout)})
	case coord.Evaluated:
		verdict := "submit"
		if in.Restart {
			verdict = "restart"
		}
		at(pre, event.PostEvaluation{Agent: in.Agent, Verdict: verdict, Reason: in.Reason})
	}

	for _, c := range cmds {
		switch c := c.(type) {
		case coord.AgentFailed:
			at(post, event.AgentFailed{Agent: c.Agent, Err: c.Err, Reason: c.Reason, Failure: c.Failure})
		case coord.Present:
			at(post, event.WinnerSelected{Agent: c.Winner, Votes: c.Tally, How: c.How, Label: ref(c.Answer).Answer, Answers: refs(c.Answers)})
		case coord.Final:
			at(post, event.FinalAnswer{Agent: c.Agent, Text: c.Text, Reason: c.Reason})
		case coord.Restart:
			at(event.Header{Attempt: c.Attempt - 1, Epoch: post.Epoch}, event.RunRestarted{Agent: c.Agent, Reason: c.Reason, Instructions: c.Instructions})
		}
	}
	return out
}

// answerRef names an answer both ways for the events: the anonymous label
// coord gave it and the stable log label "agent<config position>.<revision>"
// (pos: each agent's config position, from 1).
func answerRef(pos map[string]int, a coord.Answer) event.AnswerRef {
	return event.AnswerRef{Label: a.Label, Agent: a.Agent, Answer: event.AnswerLabel(pos[a.Agent], a.Rev)}
}

func answerRefs(pos map[string]int, as []coord.Answer) []event.AnswerRef {
	refs := make([]event.AnswerRef, len(as))
	for i, a := range as {
		refs[i] = answerRef(pos, a)
	}
	return refs
}

// DeriveLog replays a run's log through a fresh machine and returns the
// decision events the run published (derive), in order: what `massgen
// replay --events` prints, from the log alone. Their sequence numbers and
// times are not the run's (the log does not keep them), and what only the
// running process added (snapshot paths, token usage) is absent.
func DeriveLog(l *coord.Log) []event.Event {
	pos := map[string]int{}
	for i, id := range l.Config.Agents {
		pos[id] = i + 1
	}
	m := coord.New(l.Config)
	var out []event.Event
	var pre event.Header
	for _, r := range l.Steps {
		cmds := m.Step(r.In)
		out = append(out, derive(r.In, cmds, m, pos, pre)...)
		pre = event.Header{Attempt: m.Attempt(), Epoch: m.Epoch()}
	}
	return out
}
