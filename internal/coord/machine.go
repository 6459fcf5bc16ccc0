package coord

import (
	"fmt"
	"slices"
)

// Config is what a Machine is built from: the team, the rules, and the one
// fact about the caller the rules depend on.
type Config struct {
	Agents []string // real ids in config order
	Settings
	// ClientTools is true when an API client brought its own tools: only
	// the final presentation offers them, so the winner always presents.
	ClientTools bool
	// Seed are answers accepted before the run began (a session turn that
	// an interrupted process had started): the first attempt starts with
	// them, so their agents are not asked for them again. Seeds of unknown
	// agents and empty ones are ignored; an agent's last seed is current.
	Seed []Seed `json:",omitempty"`
	// SeedVotes are votes counted before the run began, in the epoch of
	// the seeded answers (a resumed turn carries the votes of its last
	// epoch): their voters start as having voted, so they are not asked
	// again. A vote by an unknown agent or for an agent without a seeded
	// answer is ignored.
	SeedVotes []Vote `json:",omitempty"`
}

// Seed is an answer accepted before the run began.
type Seed struct {
	Agent, Content string
}

// phase is where the run stands.
type phase int

const (
	phaseNew          phase = iota // before Start
	phaseCoordinating              // agents are answering and voting
	phasePresenting                // the winner writes the final answer
	phaseEvaluating                // the winner checks the final answer
	phaseDirect                    // the only agent answers in one plain call
	phaseDone                      // Finish was issued
)

type agent struct {
	id        string
	status    Status
	turn      TurnID // in-flight turn when Working
	firstTurn bool   // the in-flight turn started before this agent had an answer
	answers   []string
	vote      *Vote      // vote in the current epoch
	failures  int        // consecutive failed turns that count against the budget
	round     RoundStage // the last stage of the in-flight turn's round timer that passed
	// circuitWaits counts consecutive failures caused by an open circuit
	// breaker: they do not spend the budget, up to MaxCircuitWaits.
	circuitWaits int
	gate         *gate // the last accepted checklist (checklist.go)
	checked      bool  // ... and whether there ever was one
	injected     int   // new answers injected into the in-flight turn (midstream.go)
	lastErr      string
	lastFailure  *Failure
	// streak and seenPeers are decomposition mode's answer cap: answers in
	// a row, and the peers' answers seen when it last restarted (decompose.go).
	streak, seenPeers int
}

// Machine is the coordination state of one whole run: its attempts, each
// attempt's epochs and votes, the final presentation, post-evaluation, the
// budget and the deadline. It is not safe for concurrent use: one
// goroutine feeds it.
type Machine struct {
	cfg    Config
	agents []*agent
	byID   map[string]*agent
	phase  phase
	turns  TurnID

	attempt int
	epoch   int
	win     *Present // the current attempt's decision, once made
	final   *Final   // the current attempt's final answer, once known

	deadline     bool   // the run deadline has passed
	cut          bool   // ... and it decided coordination
	graceExpired bool   // the presentation ran out of grace
	budget       string // why the budget stopped the run, once spent
}

// New returns a machine for the given team. Agent ids must be unique.
// Zero settings take their defaults (Settings.WithDefaults).
func New(cfg Config) *Machine {
	cfg.Settings = cfg.Settings.WithDefaults()
	m := &Machine{cfg: cfg, byID: map[string]*agent{}}
	for _, id := range cfg.Agents {
		a := &agent{id: id}
		m.agents = append(m.agents, a)
		m.byID[id] = a
	}
	return m
}

// Step feeds one input to the machine and returns what to do about it, in
// order. Inputs that no longer apply (a result of a cancelled turn, a timer
// after the run moved on) return nothing, except that every Proposed gets
// its Reply.
func (m *Machine) Step(in Input) []Command {
	switch in := in.(type) {
	case Start:
		return m.start()
	case Proposed:
		return m.propose(in)
	case TurnFailed:
		return m.turnFailed(in)
	case DeadlinePassed:
		return m.deadlinePassed()
	case BudgetSpent:
		return m.budgetSpent(in)
	case Presented:
		return m.presented(in)
	case Evaluated:
		return m.evaluated(in)
	case GraceExpired:
		return m.graceExpiredInput()
	case Interrupted:
		return m.interrupted()
	case RoundTimeUp:
		return m.roundTimeUp(in)
	case CriteriaSet:
		return m.criteriaSet(in)
	}
	panic(fmt.Sprintf("coord: unknown input %T", in))
}

// Epoch is the number of answers accepted so far in this attempt.
func (m *Machine) Epoch() int { return m.epoch }

// Attempt is the current attempt, from 1 (0 before Start).
func (m *Machine) Attempt() int { return m.attempt }

// Done reports whether the machine issued Finish.
func (m *Machine) Done() bool { return m.phase == phaseDone }

// Settings returns the rules in force, defaults applied.
func (m *Machine) Settings() Settings { return m.cfg.Settings }

// Status returns an agent's status.
func (m *Machine) Status(id string) Status { return m.byID[id].status }

// AnswerCount returns how many answers an agent has given in this attempt.
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

// Votes are the votes counted in the current epoch, in config order of
// voters.
func (m *Machine) Votes() []Vote {
	var out []Vote
	for _, a := range m.agents {
		if a.vote != nil {
			out = append(out, *a.vote)
		}
	}
	return out
}

// Carried is what a run resumed from this machine's state carries: the
// current answers as seeds and the votes of the current epoch (Config.Seed
// and Config.SeedVotes of the resumed run), so that no agent is asked
// again for an answer or a vote it already gave.
func (m *Machine) Carried() (seeds []Seed, votes []Vote) {
	for _, a := range m.Answers() {
		seeds = append(seeds, Seed{Agent: a.Agent, Content: a.Content})
	}
	return seeds, m.Votes()
}

// start begins the run: the deadline, then every agent's first turn in
// parallel (or the one direct call).
func (m *Machine) start() []Command {
	if m.phase != phaseNew {
		return nil
	}
	m.attempt = 1
	cmds := []Command{SetTimer{Timer: TimerDeadline, After: m.cfg.Timeout}}
	if m.cfg.Direct && len(m.agents) == 1 {
		m.phase = phaseDirect
		m.win = &Present{Winner: m.agents[0].id, How: "single agent, no coordination"}
		return append(cmds, AnswerDirect{Agent: m.agents[0].id})
	}
	m.phase = phaseCoordinating
	for _, sd := range m.cfg.Seed {
		if a, ok := m.byID[sd.Agent]; ok && normalise(sd.Content) != "" {
			a.answers = append(a.answers, normalise(sd.Content))
			m.epoch++
		}
	}
	answers := m.Answers()
	for _, v := range m.cfg.SeedVotes {
		a, known := m.byID[v.Voter]
		i := slices.IndexFunc(answers, func(x Answer) bool { return x.Agent == v.Target })
		if known && i >= 0 {
			a.status = Voted
			a.vote = &Vote{Voter: v.Voter, Target: v.Target, Label: answers[i].Label, Reason: v.Reason}
		}
	}
	for _, a := range m.agents {
		if a.status != Voted {
			cmds = append(cmds, m.startTurn(a)...)
		}
	}
	// Every vote was carried: the decision is made again, not asked for.
	return append(cmds, m.checkConsensus("")...)
}
