package coord

import (
	"fmt"
	"slices"
)

// This file holds the rules of one attempt: turns, answers, votes,
// failures, consensus and the winner (DESIGN.md §2, steps 1–4).

// startTurn starts a turn of a: the StartTurn, and its round timer when
// round timeouts are on (rounds.go).
func (m *Machine) startTurn(a *agent) []Command {
	m.turns++
	a.status = Working
	a.turn = m.turns
	a.firstTurn = len(a.answers) == 0
	a.round, a.injected = "", 0
	if m.decomposition() {
		m.seePeers(a) // the turn is shown every current answer
	}
	st := StartTurn{Agent: a.id, Turn: a.turn, Attempt: m.attempt, Epoch: m.epoch, Answers: m.Answers(), Delay: m.backoff(a)}
	if t, ok := m.roundTimer(a, st.Delay); ok {
		return []Command{st, t}
	}
	return []Command{st}
}

// release starts a turn for every idle agent, unless holding applies
// (FirstAnswersHold): then idle agents wait until no independent first
// answer is in flight. An idle agent that is itself still owed its first
// answer always starts. An agent paused for fairness (fairness.go) waits
// until the others catch up; since starting one agent changes nobody's
// lead, one pass decides them all.
func (m *Machine) release() []Command {
	holding := false
	if m.cfg.FirstAnswers == FirstAnswersHold && m.cfg.RestartPolicy == RestartCancel {
		for _, a := range m.agents {
			pendingFirst := a.status == Working && a.firstTurn || a.status == Idle && len(a.answers) == 0
			if pendingFirst {
				holding = true
			}
		}
	}
	var cmds []Command
	for _, a := range m.agents {
		if a.status == Idle && (!holding || len(a.answers) == 0) && !m.paused(a) {
			if m.decomposition() && m.autoStop(a) {
				continue
			}
			cmds = append(cmds, m.startTurn(a)...)
		}
	}
	return cmds
}

// current reports whether turn is the in-flight turn of agent id.
func (m *Machine) current(id string, turn TurnID) (*agent, bool) {
	a, ok := m.byID[id]
	if !ok || m.phase != phaseCoordinating || a.status != Working || a.turn != turn {
		return a, false
	}
	return a, true
}

// propose judges the action a turn proposes. A vote decided on an older
// answer set is never counted. Rejections leave the turn in flight so it
// can retry.
func (m *Machine) propose(in Proposed) []Command {
	reply := func(v Verdict, cmds ...Command) []Command {
		return append([]Command{Reply{Agent: in.Agent, Turn: in.Turn, Verdict: v}}, cmds...)
	}
	a, ok := m.current(in.Agent, in.Turn)
	switch {
	case !ok && m.phase != phaseCoordinating:
		return reply(Verdict{Outcome: Stale, Message: "coordination ended"})
	case !ok:
		return reply(Verdict{Outcome: Stale, Message: "this turn was superseded"})
	}
	var v Verdict
	var cmds []Command
	switch in.Action.Kind {
	case ActChecklist:
		v = m.checklist(a, in.Seen, in.Action)
		v.Message = m.stopWords(v.Message)
	case ActDraft:
		v = m.draft(a, in.Seen, in.Action)
	case ActVote:
		v, cmds = m.vote(a, in.Seen, in.Action)
	case ActStop:
		v, cmds = m.stopAction(a, in.Seen, in.Action)
	default:
		v, cmds = m.answer(a, in.Action)
	}
	return reply(v, cmds...)
}

func (m *Machine) vote(a *agent, seen int, act Action) (Verdict, []Command) {
	if m.decomposition() {
		return Verdict{Outcome: Rejected, Message: "vote is not available in decomposition mode: call stop when your subtask is done, or new_answer to share new work."}, nil
	}
	answers := m.Answers()
	if len(answers) == 0 {
		return Verdict{Outcome: Rejected, Message: "Cannot vote: no answers exist yet. Use new_answer to give your own answer."}, nil
	}
	if seen != m.epoch {
		// The vote was decided on an answer set that has since changed: it is
		// never counted. The agent goes back to work with the current set.
		return Verdict{Outcome: Stale, Message: "the answers changed while you decided; vote discarded"}, m.startTurn(a)
	}
	if why := m.gated(a, ActVote); why != "" {
		return Verdict{Outcome: Rejected, Message: why}, nil
	}
	i := slices.IndexFunc(answers, func(x Answer) bool { return x.Label == act.Label })
	if i < 0 {
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf("Invalid agent_id %q. Valid agents: %s. Call vote again with one of them.", act.Label, labelList(answers))}, nil
	}
	target := answers[i]
	a.vote = &Vote{Voter: a.id, Target: target.Agent, Label: target.Label, Reason: act.Reason}
	a.status = Voted
	a.failures, a.circuitWaits = 0, 0
	v := Verdict{Outcome: Accepted, Label: target.Label, Target: target.Agent}
	if cmds := m.release(); len(cmds) > 0 {
		return v, cmds
	}
	return v, m.checkConsensus("")
}

func (m *Machine) answer(a *agent, act Action) (Verdict, []Command) {
	content := normalise(act.Content)
	if content == "" {
		return Verdict{Outcome: Rejected, Message: "new_answer needs non-empty content: put your complete answer in the content argument."}, nil
	}
	if m.decomposition() {
		if why := m.streakCapped(a); why != "" {
			return Verdict{Outcome: Rejected, Message: why}, nil
		}
	} else if m.cfg.MaxAnswers > 0 && len(a.answers) >= m.cfg.MaxAnswers {
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf("You have reached the maximum of %d new answers. Do not call new_answer again: call vote for the best existing answer.", m.cfg.MaxAnswers)}, nil
	}
	if why := m.globalCapped(); why != "" {
		return Verdict{Outcome: Rejected, Message: why}, nil
	}
	if why := m.leadCapped(a); why != "" {
		return Verdict{Outcome: Rejected, Message: why}, nil
	}
	if why := m.gatedIn(a, ActNewAnswer); why != "" {
		return Verdict{Outcome: Rejected, Message: why}, nil
	}
	for _, other := range m.Answers() {
		if normalise(other.Content) == content {
			return Verdict{Outcome: Rejected, Message: fmt.Sprintf("This answer is identical to %s's answer. Vote for %s instead, or give a genuinely different answer.", other.Label, other.Label)}, nil
		}
		if limit, strict := noveltyLimit(m.cfg.Novelty); strict && jaccard(content, other.Content) > limit {
			return Verdict{Outcome: Rejected, Message: fmt.Sprintf("This answer is too similar to %s's answer (word overlap above %.0f%%, answer_novelty_requirement: %s). Give a substantially different answer, or vote for %s.", other.Label, limit*100, m.cfg.Novelty, other.Label)}, nil
		}
	}
	a.answers = append(a.answers, content)
	a.failures, a.circuitWaits = 0, 0
	a.streak++
	m.epoch++
	label := ""
	for _, x := range m.Answers() {
		if x.Agent == a.id {
			label = x.Label
		}
	}
	var cmds []Command
	for _, o := range m.agents {
		o.vote = nil // a new answer invalidates every vote
		switch {
		case o.status == Failed:
		case o == a:
			o.status = Idle
		case o.status == Working:
			if m.cfg.FirstAnswers.Independent() && o.firstTurn {
				continue // let its first answer be its own work
			}
			if m.cfg.RestartPolicy == RestartInject {
				if m.injectable(o) {
					o.injected++
					if m.decomposition() {
						m.seePeers(o)
					}
					cmds = append(cmds, Inject{Agent: o.id, Turn: o.turn, Epoch: m.epoch, Answers: m.Answers()})
				}
				continue
			}
			cmds = append(cmds, CancelTurn{Agent: o.id, Turn: o.turn, Reason: "new answer from " + a.id, Cause: a.id})
			o.status = Idle
		default: // voted: back to work with the new answer set
			o.status = Idle
		}
	}
	more := m.release()
	if len(more) == 0 && m.decomposition() {
		more = m.checkConsensus("") // every agent stopped at its cap
	}
	cmds = append(cmds, more...)
	return Verdict{Outcome: Accepted, Label: label, Rev: len(a.answers)}, cmds
}

// turnFailed records that a turn ended without an accepted action. The agent
// retries with a fresh turn after a backoff until its failure budget is
// spent; then it leaves the run so it cannot block consensus. A permanent
// failure (Failure.Permanent: a refused key, an unknown model) ends its
// attempts at once.
func (m *Machine) turnFailed(in TurnFailed) []Command {
	a, ok := m.current(in.Agent, in.Turn)
	if !ok {
		return nil
	}
	a.lastErr, a.lastFailure = in.Err, in.Failure
	a.status = Idle
	circuit := in.CircuitOpen || (in.Failure != nil && in.Failure.Kind == FailCircuitOpen)
	if circuit && a.circuitWaits < MaxCircuitWaits {
		// The request never left: the breaker of its provider model is open.
		// Waiting (the backoff grows) is all that helps; it is not the
		// agent's fault, so the budget is kept for real failures.
		a.circuitWaits++
		return m.release()
	}
	a.failures++
	reason := "1 failed turn"
	if a.failures > 1 {
		reason = fmt.Sprintf("%d consecutive failed turns", a.failures)
	}
	if in.Failure.Permanent() {
		// The provider refused the request itself (a key, a model name, the
		// request's shape): every further turn would be refused the same way,
		// only later, so the agent leaves now and the error is told at once.
		reason = "an error that retrying cannot fix"
		if in.Failure.Status != 0 {
			reason += fmt.Sprintf(" (HTTP %d, not retried)", in.Failure.Status)
		}
	} else if a.failures < m.cfg.FailureBudget {
		return m.release()
	}
	a.status = Failed
	a.vote = nil
	cmds := []Command{AgentFailed{Agent: a.id, Failures: a.failures, Err: in.Err, Reason: reason, Failure: in.Failure}}
	if more := m.release(); len(more) > 0 {
		return append(cmds, more...)
	}
	return append(cmds, m.checkConsensus("")...)
}

// stop ends the attempt early (run deadline, budget spent): in-flight turns
// are cancelled and the votes of the current epoch decide among the
// existing answers. With no answer at all the run fails; timeout marks that
// failure as a timeout.
func (m *Machine) stop(reason string, timeout bool) []Command {
	var cmds []Command
	for _, a := range m.agents {
		if a.status == Working {
			cmds = append(cmds, CancelTurn{Agent: a.id, Turn: a.turn, Reason: "run stopped: " + reason})
			a.status = Idle
		}
	}
	if len(m.Answers()) == 0 {
		what, status := "the run stopped ("+reason+")", RunFailed
		if timeout {
			what, status = "the run timed out", RunTimedOut
		}
		return append(cmds, m.finish(status, what+" before any agent gave an answer"))
	}
	return append(cmds, m.conclude(m.decide(reason+": "))...)
}

// checkConsensus concludes the attempt once every live agent has voted in
// this epoch.
func (m *Machine) checkConsensus(prefix string) []Command {
	for _, a := range m.agents {
		if a.status != Failed && a.status != Voted {
			return nil
		}
	}
	if len(m.Answers()) == 0 {
		return []Command{m.finish(RunFailed, "every agent failed before giving an answer:"+m.failureSummary())}
	}
	return m.conclude(m.decide(prefix))
}

func (m *Machine) failureSummary() string {
	s := ""
	for _, a := range m.agents {
		if a.lastErr != "" {
			s += fmt.Sprintf("\n  %s: %s", a.id, a.lastErr)
		}
	}
	return s
}

// decide picks the winner: plurality of current-epoch votes, ties to the
// author earliest in config order; with no votes, the first agent in config
// order that has an answer.
func (m *Machine) decide(prefix string) Present {
	if m.decomposition() {
		return m.decideDecomposition(prefix)
	}
	answers := m.Answers()
	tally := map[string]int{}
	var votes []Vote
	for _, a := range m.agents {
		if a.vote != nil {
			tally[a.vote.Target]++
			votes = append(votes, *a.vote)
		}
	}
	p := Present{Answers: answers, Tally: tally, Votes: votes}
	if len(votes) == 0 {
		p.Winner, p.Answer, p.How = answers[0].Agent, answers[0], prefix+"no votes: first answer in config order"
		return p
	}
	best, tied := -1, 0
	for _, ans := range answers { // config order
		switch n := tally[ans.Agent]; {
		case n > best:
			best, tied = n, 1
			p.Winner, p.Answer = ans.Agent, ans
		case n == best:
			tied++
		}
	}
	p.How = prefix + "plurality"
	if tied > 1 {
		p.How = prefix + "tie broken by config order"
	}
	return p
}

func labelList(answers []Answer) string {
	s := ""
	for i, a := range answers {
		if i > 0 {
			s += ", "
		}
		s += a.Label
	}
	return s
}
