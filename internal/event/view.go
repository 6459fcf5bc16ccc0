package event

import (
	"github.com/massgen/massgen/internal/coord"

	"maps"
	"slices"
	"sync"
	"time"
)

// Agent statuses in a Snapshot.
const (
	StatusIdle       = "idle"       // waiting for a turn
	StatusWorking    = "working"    // a turn is in flight
	StatusAnswered   = "answered"   // its latest turn gave an accepted answer
	StatusVoted      = "voted"      // voted in the current epoch
	StatusRestarted  = "restarted"  // its turn was cancelled by a newer answer
	StatusFailed     = "failed"     // out of the run
	StatusStalled    = "stalled"    // in a turn, but no byte (or no event) for the stall threshold
	StatusPresenting = "presenting" // writing the final answer
	StatusDone       = "done"       // the run is over
	// StatusInterrupted: the run was interrupted while the agent was in a
	// turn (or presenting), which therefore never ended.
	StatusInterrupted = "interrupted"
)

// Run phases and the status of a run in progress.
const (
	PhaseCoordinating = "coordinating"
	PhasePresenting   = "presenting"
	PhasePostEval     = "post_evaluation"
	PhaseDone         = "done"

	RunRunning = "running"
)

// DefaultStallAfter is how long an agent in a turn may go silent before
// the view calls it stalled, when no idle-stream timeout says otherwise
// (StallAfterFor). It is a display threshold: the providers' idle-stream
// timeout is what actually fails such a turn.
const DefaultStallAfter = 30 * time.Second

// StallAfterFor is the stall threshold of a run whose model requests fail
// after idle without a byte: half of it, so that a hung provider shows as
// stalled well before the timeout fails its turn, and at most
// DefaultStallAfter, so that a long timeout (for models that think
// silently) still shows a silence early. idle <= 0 (no timeout) gives
// DefaultStallAfter.
func StallAfterFor(idle time.Duration) time.Duration {
	if idle <= 0 {
		return DefaultStallAfter
	}
	return min(idle/2, DefaultStallAfter)
}

// Silence says how long the model request agent has in flight has gone
// without receiving a byte; ok is false when it has none in flight. The
// orchestrator's byte watch provides it (orchestrator.Activities).
type Silence func(agent string) (d time.Duration, ok bool)

// View is the state of one run, built from its events: every consumer
// (log files, displays, servers) reads it rather than re-deriving state
// from events. Apply feeds it; Snapshot reads a copy. It is safe for
// concurrent use, and applying an event twice (same Seq) is harmless, so
// a broker and a log writer may both feed the same view.
type View struct {
	mu         sync.Mutex
	last       uint64
	stallAfter time.Duration
	silence    Silence // nil: events are the only sign of life
	s          Snapshot
	idx        map[string]int  // agent id → index in s.Agents
	inTurn     map[string]bool // a turn or presentation of the agent is in flight
}

// Snapshot is a copy of a View at one moment; holding it blocks nothing.
type Snapshot struct {
	Question   string
	Status     string // running|completed|timeout|failed|interrupted
	Phase      string
	Attempt    int
	Epoch      int // answers accepted in this attempt
	StartedAt  time.Time
	UpdatedAt  time.Time // time of the latest event
	FinishedAt time.Time
	Err        string // why the run did not complete

	Agents  []AgentView  // in config order
	Answers []AnswerView // every accepted answer of the run, in order
	Current []AnswerRef  // this attempt's current answer set
	Votes   []VoteView   // the counted votes of the current epoch
	// Tally is real id → votes in the current epoch (answers with no vote
	// at 0), or the winner's tally once a winner is selected.
	Tally map[string]int

	Winner      string
	How         string // how the winner was chosen
	WinnerLabel string // stable label of the winning answer
	FinalAgent  string
	Final       string
	FinalReason string // "presentation", or why the stored answer stands
	Stopped     string // why the run stopped early (budget), if it did

	// Fallback says, once the run has finished, why its final answer is the
	// winner's stored answer ("" when a presentation made it); GraceExpired
	// is true when the presentation ran out of time past the deadline.
	Fallback     string
	GraceExpired bool

	Ignored []string // config features this run does not do
	Usage   Usage    // whole run
	Deltas  int      // streamed deltas seen
}

// AgentView is one agent in a Snapshot.
type AgentView struct {
	AgentInfo
	Status       string
	Answers      int    // answers given in this attempt
	LatestAnswer string // stable label of its latest answer
	Vote         *VoteView
	Turns        int
	Restarts     int
	Rejections   int
	Failures     int // failed turns (errors, idle streams, turn timeouts)
	LastError    string
	// LastFailure is LastError as data (nil before the first failure, or
	// from a log of an earlier version).
	LastFailure *coord.Failure
	Usage       Usage
	// ToolCalls counts the calls of its own tools (workflow tools aside),
	// ToolErrors those that failed; ToolRounds counts the responses that
	// ran tools, as its turns report them when they end.
	ToolCalls, ToolErrors, ToolRounds int
	LastActivity                      time.Time
	StalledSeconds                    float64 // with StatusStalled: time since its last byte, else since its last event
	// SinceLastByte is, with StatusStalled, how long its model request in
	// flight has received no byte (0 when the stall is known from events
	// only: no request was in flight).
	SinceLastByte time.Duration
}

// AnswerView is one accepted answer.
type AnswerView struct {
	Label     string // stable, "agent<position>.<revision>"
	AnonLabel string // as the other agents were shown it
	Agent     string
	Content   string
	Attempt   int
	Epoch     int
	Time      time.Time
}

// VoteView is one counted vote.
type VoteView struct {
	Voter        string
	Target       string // real id
	TargetLabel  string // anonymous label as the voter named it
	TargetAnswer string // stable label of the answer voted for
	Reason       string
	Epoch        int
	Time         time.Time
}

// NewView returns the view of a run that has not started.
func NewView() *View {
	return &View{stallAfter: DefaultStallAfter, idx: map[string]int{}, inTurn: map[string]bool{},
		s: Snapshot{Status: RunRunning, Phase: PhaseCoordinating, Attempt: 1}}
}

// SetStallAfter changes the stall threshold (d > 0).
func (v *View) SetStallAfter(d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d > 0 {
		v.stallAfter = d
	}
}

// SetSilence gives the view the bytes of the agents' requests: an agent
// in a turn whose request has received nothing for the stall threshold is
// stalled even though it is within its idle timeout, and one whose bytes
// flow is not, even when they make no event (a long answer streamed as
// tool-call arguments). Without a request in flight, events decide.
func (v *View) SetSilence(f Silence) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.silence = f
}

// Declare records what is known before the first event: the team (kept in
// this order; RunStarted fills what is missing) and the config features
// this run ignores.
func (v *View) Declare(team []AgentInfo, ignored []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, a := range team {
		v.declare(a)
	}
	if ignored != nil {
		v.s.Ignored = slices.Clone(ignored)
	}
}

func (v *View) declare(a AgentInfo) *AgentView {
	if i, ok := v.idx[a.ID]; ok {
		ag := &v.s.Agents[i]
		if ag.Backend == "" && ag.Model == "" {
			ag.AgentInfo = a
		}
		return ag
	}
	v.idx[a.ID] = len(v.s.Agents)
	v.s.Agents = append(v.s.Agents, AgentView{AgentInfo: a, Status: StatusIdle})
	return &v.s.Agents[len(v.s.Agents)-1]
}

func (v *View) agent(id string) *AgentView {
	if id == "" {
		return nil
	}
	return v.declare(AgentInfo{ID: id})
}

// Apply updates the view with e. An event whose Seq the view has already
// applied is ignored (events without a Seq are always applied).
func (v *View) Apply(e Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	h := e.Head()
	if h.Seq != 0 {
		if h.Seq <= v.last {
			return
		}
		v.last = h.Seq
	}
	s := &v.s
	if s.StartedAt.IsZero() {
		s.StartedAt = h.Time
	}
	if h.Time.After(s.UpdatedAt) {
		s.UpdatedAt = h.Time
	}
	if h.Attempt > s.Attempt {
		v.newAttempt(h.Attempt)
	}
	ag := v.agent(AgentOf(e))
	if ag != nil {
		ag.LastActivity = h.Time
	} else {
		switch e.(type) {
		case TurnStarted, ToolCalled, ModelCalled, ToolProgress, AnswerAccepted, VoteAccepted, ActionRejected, TurnRestarted, TurnFailed, TurnEnded, AgentFailed, FinalStarted:
			return // about an agent, but names none: nothing to update
		}
	}
	switch e := e.(type) {
	case RunStarted:
		if s.Question == "" {
			s.Question = e.Question
		}
		for _, a := range e.Team {
			v.declare(a)
		}
	case TurnStarted:
		ag.Turns++
		ag.Status = StatusWorking
		v.inTurn[ag.ID] = true
	case TextDelta, ReasoningDelta, FinalDelta:
		s.Deltas++
	case AnswerAccepted:
		s.Epoch++
		s.Votes = nil
		for i := range s.Agents {
			if o := &s.Agents[i]; o.Vote != nil {
				o.Vote = nil
				if o.Status == StatusVoted {
					o.Status = StatusIdle
				}
			}
		}
		ag.Answers++
		ag.LatestAnswer = e.Label
		ag.Status = StatusAnswered
		v.inTurn[ag.ID] = false
		if e.Answers != nil {
			s.Current = slices.Clone(e.Answers)
		} else { // an older log, without the answer set: keep it by hand
			ref := AnswerRef{Label: e.AnonLabel, Agent: e.Agent, Answer: e.Label}
			if i := slices.IndexFunc(s.Current, func(a AnswerRef) bool { return a.Agent == e.Agent }); i >= 0 {
				s.Current[i] = ref
			} else {
				s.Current = append(s.Current, ref)
			}
		}
		s.Answers = append(s.Answers, AnswerView{Label: e.Label, AnonLabel: e.AnonLabel, Agent: e.Agent,
			Content: e.Content, Attempt: s.Attempt, Epoch: s.Epoch, Time: h.Time})
	case VoteAccepted:
		vote := VoteView{Voter: e.Agent, Target: e.Target, TargetLabel: e.TargetLabel, TargetAnswer: e.TargetAnswer,
			Reason: e.Reason, Epoch: s.Epoch, Time: h.Time}
		s.Votes = append(s.Votes, vote)
		ag.Vote = &vote
		ag.Status = StatusVoted
		v.inTurn[ag.ID] = false
	case ActionRejected:
		ag.Rejections++
	case TurnRestarted:
		ag.Restarts++
		ag.Status = StatusRestarted
		v.inTurn[ag.ID] = false
	case TurnFailed:
		v.turnFailed(ag, e.Err, e.Failure)
	case Timeout:
		if ag != nil {
			why := "turn timeout"
			if d := or(e.Err, e.Reason); d != "" {
				why += ": " + d
			}
			v.turnFailed(ag, why, e.Failure)
		}
	case ToolCalled:
		ag.ToolCalls++
		if e.IsError {
			ag.ToolErrors++
		}
	case TurnEnded:
		ag.Usage = ag.Usage.Add(e.Usage)
		ag.ToolRounds += e.ToolRounds
		s.Usage = s.Usage.Add(e.Usage)
	case AgentFailed:
		ag.Status = StatusFailed
		ag.LastError = or(e.Err, ag.LastError)
		if e.Failure != nil {
			ag.LastFailure = cloneFailure(e.Failure)
		}
		v.inTurn[ag.ID] = false
	case BudgetExceeded:
		s.Stopped = e.Reason
	case WinnerSelected:
		s.Winner, s.How, s.WinnerLabel = e.Agent, e.How, e.Label
		s.Tally = cloneVotes(e.Votes)
		if len(e.Answers) > 0 {
			s.Current = slices.Clone(e.Answers)
		}
	case FinalStarted:
		s.Phase = PhasePresenting
		ag.Status = StatusPresenting
		v.inTurn[ag.ID] = true
	case FinalAnswer:
		s.FinalAgent = or(e.Agent, s.Winner)
		s.Final, s.FinalReason = e.Text, e.Reason
		if ag != nil {
			ag.Status = StatusDone
			ag.Usage = ag.Usage.Add(e.Usage)
			v.inTurn[ag.ID] = false
		}
		s.Usage = s.Usage.Add(e.Usage)
	case PostEvaluation:
		s.Phase = PhasePostEval
		if ag != nil {
			ag.Usage = ag.Usage.Add(e.Usage)
		}
		s.Usage = s.Usage.Add(e.Usage)
	case RunRestarted:
		v.newAttempt(max(s.Attempt+1, h.Attempt))
	case RunFinished:
		s.Status = or(e.Status, "completed")
		s.Err = e.Err
		s.Fallback, s.GraceExpired = e.Fallback, e.GraceExpired
		s.FinishedAt = h.Time
		s.Phase = PhaseDone
		if s.Winner == "" {
			s.Winner = e.Winner
		}
		for i := range s.Agents {
			a := &s.Agents[i]
			switch {
			case a.Status == StatusFailed:
			case s.Status == "interrupted":
				// Not "done": the run did not end. An agent cut off in a
				// turn says so; the others keep what they last did.
				if v.inTurn[a.ID] || a.Status == StatusWorking || a.Status == StatusStalled || a.Status == StatusPresenting {
					a.Status = StatusInterrupted
				}
			default:
				a.Status = StatusDone
			}
		}
		clear(v.inTurn)
	}
}

func (v *View) turnFailed(ag *AgentView, err string, f *coord.Failure) {
	ag.Failures++
	ag.LastError, ag.LastFailure = err, cloneFailure(f)
	ag.Status = StatusIdle
	v.inTurn[ag.ID] = false
}

// newAttempt resets what an orchestration attempt starts from zero (the
// coordinator does too); counters of the whole run stay.
func (v *View) newAttempt(n int) {
	s := &v.s
	s.Attempt, s.Epoch, s.Phase = n, 0, PhaseCoordinating
	s.Votes, s.Current, s.Tally = nil, nil, nil
	s.Winner, s.How, s.WinnerLabel = "", "", ""
	s.FinalAgent, s.Final, s.FinalReason, s.Stopped = "", "", "", ""
	for i := range s.Agents {
		ag := &s.Agents[i]
		ag.Answers, ag.LatestAnswer, ag.Vote = 0, "", nil
		if ag.Status != StatusFailed {
			ag.Status = StatusIdle
		}
	}
	clear(v.inTurn)
}

// Snapshot returns a copy of the view as of now: an agent in a turn whose
// request has received no byte for the stall threshold (or, with no
// request in flight or no Silence, that has made no event for it) shows as
// stalled, with the time since.
func (v *View) Snapshot(now time.Time) Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.s
	s.Agents = slices.Clone(s.Agents)
	s.Answers = slices.Clone(s.Answers)
	s.Current = slices.Clone(s.Current)
	s.Votes = slices.Clone(s.Votes)
	s.Ignored = slices.Clone(s.Ignored)
	if s.Tally == nil {
		s.Tally = s.EpochTally()
	} else {
		s.Tally = maps.Clone(s.Tally)
	}
	for i := range s.Agents {
		ag := &s.Agents[i]
		if ag.Vote != nil {
			vote := *ag.Vote
			ag.Vote = &vote
		}
		ag.LastFailure = cloneFailure(ag.LastFailure)
		if v.inTurn[ag.ID] {
			v.markStall(ag, now)
		}
	}
	return s
}

// markStall marks an agent in a turn stalled if it has been silent for the
// threshold: by its bytes when a request is in flight, else by its events.
func (v *View) markStall(ag *AgentView, now time.Time) {
	if v.silence != nil {
		if d, ok := v.silence(ag.ID); ok {
			if d >= v.stallAfter {
				ag.Status, ag.StalledSeconds, ag.SinceLastByte = StatusStalled, d.Seconds(), d
			}
			return
		}
	}
	if idle := now.Sub(ag.LastActivity); !ag.LastActivity.IsZero() && idle >= v.stallAfter {
		ag.Status, ag.StalledSeconds = StatusStalled, idle.Seconds()
	}
}

// Agent returns the agent id of the snapshot.
func (s *Snapshot) Agent(id string) (AgentView, bool) {
	for _, a := range s.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return AgentView{}, false
}

// Labels maps the anonymous labels of the current answer set to real ids.
func (s *Snapshot) Labels() map[string]string {
	m := make(map[string]string, len(s.Current))
	for _, a := range s.Current {
		m[a.Label] = a.Agent
	}
	return m
}

// Progress is where the run stands, without copying a snapshot: its
// status (running until RunFinished), attempt and epoch.
func (v *View) Progress() (status string, attempt, epoch int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.s.Status, v.s.Attempt, v.s.Epoch
}

// EpochTally counts the current epoch's votes per real id, with every
// author of a current answer present (at 0 without votes).
func (s *Snapshot) EpochTally() map[string]int {
	t := make(map[string]int, len(s.Current))
	for _, a := range s.Current {
		t[a.Agent] = 0
	}
	for _, vote := range s.Votes {
		t[vote.Target]++
	}
	return t
}
