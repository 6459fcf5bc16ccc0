package coord

import "time"

// Command is something the orchestrator must do. It is one of the types
// below; like inputs, commands encode to JSON (MarshalCommand).
type Command interface{ command() }

// Reply answers a Proposed input: the turn waiting for it goes on (a
// rejection: retry with the message) or ends.
type Reply struct {
	Agent   string
	Turn    TurnID
	Verdict Verdict
}

// StartTurn asks for a new turn of Agent that sees Answers (the answer set of
// Epoch). Vote is offered only when Answers is non-empty. Delay is how long
// to wait before the request goes out: the backoff after failed turns.
type StartTurn struct {
	Agent   string
	Turn    TurnID
	Attempt int
	Epoch   int
	Answers []Answer
	Delay   time.Duration `json:",omitempty"`
}

// CancelTurn aborts an in-flight turn at once (restart policy): its request
// is cancelled so no more tokens are spent on an outdated answer set.
type CancelTurn struct {
	Agent  string
	Turn   TurnID
	Reason string // e.g. "new answer from agent2"
	Cause  string `json:",omitempty"` // real id whose answer caused it
}

// Inject delivers new answers to an in-flight turn (inject policy): the turn
// finishes its current step, then continues with an update message.
type Inject struct {
	Agent   string
	Turn    TurnID
	Epoch   int
	Answers []Answer
}

// AgentFailed reports that Agent spent its failure budget and left the run.
type AgentFailed struct {
	Agent    string
	Failures int
	Err      string
	Reason   string // e.g. "3 consecutive failed turns"
	// Failure is the last failure as data (Err is its message), when known.
	Failure *Failure `json:",omitempty"`
}

// Present ends coordination: Winner's answer won. Unless Skip says why not,
// the orchestrator now has Winner write the final presentation and reports
// it back with Presented.
type Present struct {
	Winner  string
	Answer  Answer         // the winner's stored answer (the fallback)
	Answers []Answer       // every current answer, for the presentation prompt
	Tally   map[string]int // real id → votes in the final epoch
	Votes   []Vote         // the counted votes, in config order of voters
	How     string         // "plurality", "tie broken by config order", "no votes: first answer in config order", "timeout: …"
	Skip    string         `json:",omitempty"` // why there is no presentation; the stored answer is final
}

// AnswerDirect has Agent answer the question in one plain call, without
// workflow tools (Settings.Direct); it is reported back with Presented.
type AnswerDirect struct{ Agent string }

// Final is the final answer of the current attempt: the presentation's
// text, or the winner's stored answer (Fallback says so, Reason says why).
type Final struct {
	Agent    string
	Text     string
	Reason   string // "presentation", or why the stored answer is final
	Fallback bool   `json:",omitempty"`
}

// Evaluate has Agent check the final answer (post-evaluation); it is
// reported back with Evaluated.
type Evaluate struct {
	Agent string
	Final string
}

// Restart begins attempt Attempt after the winner's post-evaluation asked
// for it: every agent sees Reason and Instructions (with the rejected
// Final) as feedback. StartTurn commands follow.
type Restart struct {
	Attempt      int
	Agent        string // the winner that asked
	Reason       string
	Instructions string
	Final        string
}

// CancelCall aborts the presentation, evaluation or direct call in flight.
type CancelCall struct{ Reason string }

// Timer names a timer of the run.
type Timer string

const (
	TimerDeadline Timer = "deadline" // fires DeadlinePassed
	TimerGrace    Timer = "grace"    // fires GraceExpired
	// TimerRound is one agent's round timer (Agent, Turn, Stage): it fires
	// RoundTimeUp. An agent has one at a time; a new one replaces it.
	TimerRound Timer = "round"
)

// SetTimer starts Timer; when After has passed, the orchestrator feeds its
// input (DeadlinePassed, GraceExpired, RoundTimeUp). Timers end with the
// run.
type SetTimer struct {
	Timer Timer
	After time.Duration
	// Agent, Turn and Stage are a round timer's (TimerRound).
	Agent string     `json:",omitempty"`
	Turn  TurnID     `json:",omitempty"`
	Stage RoundStage `json:",omitempty"`
}

// WrapUp tells a turn in flight that its round's time is up (rounds.go):
// the turn shows Message to its model before its next request; after the
// hard limit (Hard) it may only call vote or new_answer.
type WrapUp struct {
	Agent   string
	Turn    TurnID
	Hard    bool `json:",omitempty"`
	Message string
}

// Finish ends the run. Everything still running is cancelled; the result
// is what the fields say.
type Finish struct {
	Status  RunStatus
	Winner  string `json:",omitempty"`
	How     string `json:",omitempty"`
	Final   string `json:",omitempty"` // the final answer (empty unless completed, or interrupted during the presentation)
	Reason  string `json:",omitempty"` // why the run did not complete
	Attempt int
	// Fallback says why the winner's stored answer is the final answer
	// ("" when the presentation made it).
	Fallback string `json:",omitempty"`
	// Deadline is true when the run deadline cut coordination short.
	Deadline bool `json:",omitempty"`
	// GraceExpired is true when the presentation did not end by the deadline
	// plus the presentation grace, so the stored answer is final.
	GraceExpired bool `json:",omitempty"`
	// Failures are the last failure of each agent that had one, in config
	// order, when the run failed: why every agent left.
	Failures []Failure      `json:",omitempty"`
	Tally    map[string]int `json:",omitempty"`
	Answers  []Answer       `json:",omitempty"`
}

func (Reply) command()        {}
func (StartTurn) command()    {}
func (CancelTurn) command()   {}
func (Inject) command()       {}
func (AgentFailed) command()  {}
func (Present) command()      {}
func (AnswerDirect) command() {}
func (Final) command()        {}
func (Evaluate) command()     {}
func (Restart) command()      {}
func (CancelCall) command()   {}
func (SetTimer) command()     {}
func (WrapUp) command()       {}
func (Finish) command()       {}

// Vote is one counted vote.
type Vote struct {
	Voter  string
	Target string // real id
	Label  string // as the voter saw it
	Reason string
	// Stop is set when this is a stop in decomposition mode (decompose.go):
	// its status, complete or blocked; Target is the voter itself, Reason
	// its summary.
	Stop string `json:",omitempty"`
}
