package coord

import (
	"fmt"
	"slices"
)

// Config holds the rules a Machine enforces.
type Config struct {
	Agents []string // real ids in config order
	// MaxAnswers caps new answers per agent; 0 means unlimited.
	MaxAnswers int
	// Novelty is lenient, balanced or strict (answer_novelty_requirement).
	Novelty string
	// Inject selects restart_policy: inject; false means restart (cancel and start over).
	Inject bool
	// IndependentFirstAnswer keeps an agent working on its first answer from
	// being interrupted by others' answers (default true in config).
	IndependentFirstAnswer bool
	// FailureBudget is how many consecutive failed turns remove an agent; 0 means 3.
	FailureBudget int
	// Hold keeps agents idle while another agent's independent first answer
	// is in flight (restart policy only): that answer is certain to come and
	// to cancel any turn started before it, so starting one only burns tokens.
	Hold bool
}

type agent struct {
	id        string
	status    Status
	turn      TurnID // in-flight turn when Working
	firstTurn bool   // the in-flight turn started before this agent had an answer
	answers   []string
	vote      *Vote // vote in the current epoch
	failures  int   // consecutive
	lastErr   string
}

// Machine is the coordination state of one orchestration attempt.
// It is not safe for concurrent use: one goroutine feeds it.
type Machine struct {
	cfg    Config
	agents []*agent
	byID   map[string]*agent
	epoch  int
	turns  TurnID
	done   bool
}

// New returns a machine for the given team. Agent ids must be unique.
func New(cfg Config) *Machine {
	if cfg.FailureBudget <= 0 {
		cfg.FailureBudget = 3
	}
	m := &Machine{cfg: cfg, byID: map[string]*agent{}}
	for _, id := range cfg.Agents {
		a := &agent{id: id}
		m.agents = append(m.agents, a)
		m.byID[id] = a
	}
	return m
}

// Epoch is the number of answers accepted so far.
func (m *Machine) Epoch() int { return m.epoch }

// Done reports whether the machine issued Present or Fail.
func (m *Machine) Done() bool { return m.done }

// Status returns an agent's status.
func (m *Machine) Status(id string) Status { return m.byID[id].status }

// AnswerCount returns how many answers an agent has given.
func (m *Machine) AnswerCount(id string) int { return len(m.byID[id].answers) }

// Answers returns the current answer set with its labels, in config order.
func (m *Machine) Answers() []Answer {
	var out []Answer
	for _, a := range m.agents {
		if n := len(a.answers); n > 0 {
			out = append(out, Answer{
				Label:   fmt.Sprintf("agent%d", len(out)+1),
				Agent:   a.id,
				Content: a.answers[n-1],
				Rev:     n,
			})
		}
	}
	return out
}

// Start begins the attempt: every agent starts its first turn in parallel.
func (m *Machine) Start() []Command {
	var cmds []Command
	for _, a := range m.agents {
		cmds = append(cmds, m.startTurn(a))
	}
	return cmds
}

func (m *Machine) startTurn(a *agent) StartTurn {
	m.turns++
	a.status = Working
	a.turn = m.turns
	a.firstTurn = len(a.answers) == 0
	return StartTurn{Agent: a.id, Turn: a.turn, Epoch: m.epoch, Answers: m.Answers()}
}

// release starts a turn for every idle agent, unless Hold applies: then
// idle agents wait until no independent first answer is in flight. An idle
// agent that is itself still owed its first answer always starts.
func (m *Machine) release() []Command {
	holding := false
	if m.cfg.Hold && !m.cfg.Inject && m.cfg.IndependentFirstAnswer {
		for _, a := range m.agents {
			pendingFirst := a.status == Working && a.firstTurn || a.status == Idle && len(a.answers) == 0
			if pendingFirst {
				holding = true
			}
		}
	}
	var cmds []Command
	for _, a := range m.agents {
		if a.status == Idle && (!holding || len(a.answers) == 0) {
			cmds = append(cmds, m.startTurn(a))
		}
	}
	return cmds
}

// current reports whether turn is the in-flight turn of agent id.
func (m *Machine) current(id string, turn TurnID) (*agent, bool) {
	a, ok := m.byID[id]
	if !ok || m.done || a.status != Working || a.turn != turn {
		return a, false
	}
	return a, true
}

// Submit judges the action a turn proposes. seen is the epoch of the answer
// set the model saw when it decided (a vote decided on an older set is never
// counted). Rejections leave the turn in flight so it can retry.
func (m *Machine) Submit(id string, turn TurnID, seen int, act Action) (Verdict, []Command) {
	a, ok := m.current(id, turn)
	if !ok {
		return Verdict{Outcome: Stale, Message: "this turn was superseded"}, nil
	}
	switch act.Kind {
	case ActVote:
		return m.vote(a, seen, act)
	default:
		return m.answer(a, act)
	}
}

func (m *Machine) vote(a *agent, seen int, act Action) (Verdict, []Command) {
	answers := m.Answers()
	if len(answers) == 0 {
		return Verdict{Outcome: Rejected, Message: "Cannot vote: no answers exist yet. Use new_answer to give your own answer."}, nil
	}
	if seen != m.epoch {
		// The vote was decided on an answer set that has since changed: it is
		// never counted. The agent goes back to work with the current set.
		return Verdict{Outcome: Stale, Message: "the answers changed while you decided; vote discarded"}, []Command{m.startTurn(a)}
	}
	i := slices.IndexFunc(answers, func(x Answer) bool { return x.Label == act.Label })
	if i < 0 {
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf("Invalid agent_id %q. Valid agents: %s. Call vote again with one of them.", act.Label, labelList(answers))}, nil
	}
	target := answers[i]
	a.vote = &Vote{Voter: a.id, Target: target.Agent, Label: target.Label, Reason: act.Reason}
	a.status = Voted
	a.failures = 0
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
	if m.cfg.MaxAnswers > 0 && len(a.answers) >= m.cfg.MaxAnswers {
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf("You have reached the maximum of %d new answers. Do not call new_answer again: call vote for the best existing answer.", m.cfg.MaxAnswers)}, nil
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
	a.failures = 0
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
			if m.cfg.IndependentFirstAnswer && o.firstTurn {
				continue // let its first answer be its own work
			}
			if m.cfg.Inject {
				cmds = append(cmds, Inject{Agent: o.id, Turn: o.turn, Epoch: m.epoch, Answers: m.Answers()})
				continue
			}
			cmds = append(cmds, CancelTurn{Agent: o.id, Turn: o.turn, Reason: "new answer from " + a.id, Cause: a.id})
			o.status = Idle
		default: // voted: back to work with the new answer set
			o.status = Idle
		}
	}
	cmds = append(cmds, m.release()...)
	return Verdict{Outcome: Accepted, Label: label}, cmds
}

// TurnFailed records that a turn ended without an accepted action (provider
// error, turn timeout, or three invalid attempts). The agent retries with a
// fresh turn until its failure budget is spent; then it leaves the run so it
// cannot block consensus.
func (m *Machine) TurnFailed(id string, turn TurnID, err string) []Command {
	a, ok := m.current(id, turn)
	if !ok {
		return nil
	}
	a.failures++
	a.lastErr = err
	if a.failures < m.cfg.FailureBudget {
		a.status = Idle
		return m.release()
	}
	a.status = Failed
	a.vote = nil
	cmds := []Command{AgentFailed{Agent: a.id, Failures: a.failures, Err: err}}
	if more := m.release(); len(more) > 0 {
		return append(cmds, more...)
	}
	return append(cmds, m.checkConsensus("")...)
}

// Timeout ends the attempt at the run deadline: the votes of the current
// epoch decide among the existing answers.
func (m *Machine) Timeout() []Command { return m.Stop("timeout", true) }

// Stop ends the attempt early (run deadline, budget spent): in-flight turns
// are cancelled and the votes of the current epoch decide among the
// existing answers. With no answer at all the run fails; timeout marks that
// failure as a timeout.
func (m *Machine) Stop(reason string, timeout bool) []Command {
	if m.done {
		return nil
	}
	var cmds []Command
	for _, a := range m.agents {
		if a.status == Working {
			cmds = append(cmds, CancelTurn{Agent: a.id, Turn: a.turn, Reason: "run stopped: " + reason})
			a.status = Idle
		}
	}
	if len(m.Answers()) == 0 {
		m.done = true
		what := "the run stopped (" + reason + ")"
		if timeout {
			what = "the run timed out"
		}
		return append(cmds, Fail{Reason: what + " before any agent gave an answer", Timeout: timeout})
	}
	return append(cmds, m.decide(reason+": "))
}

// checkConsensus presents once every live agent has voted in this epoch.
func (m *Machine) checkConsensus(prefix string) []Command {
	for _, a := range m.agents {
		if a.status != Failed && a.status != Voted {
			return nil
		}
	}
	if len(m.Answers()) == 0 {
		m.done = true
		return []Command{Fail{Reason: "every agent failed before giving an answer:" + m.failureSummary()}}
	}
	return []Command{m.decide(prefix)}
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
	m.done = true
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
