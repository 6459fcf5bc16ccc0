package coord

// Input is something that happened, fed to Machine.Step. It is one of the
// types below: plain values that encode to JSON (MarshalInput), so the
// sequence of inputs a run fed its machine is that run's replay log.
type Input interface{ input() }

// Start begins the run: every agent starts its first turn (or, in direct
// mode, the only agent makes its one call) and the deadline is set.
type Start struct{}

// Proposed is a turn proposing the workflow action it ends with. Seen is
// the epoch of the answer set the model saw when it decided. The machine
// answers with a Reply; a rejection leaves the turn in flight to retry.
type Proposed struct {
	Agent  string
	Turn   TurnID
	Seen   int
	Action Action
}

// TurnFailed is a turn ending without an accepted action: a provider
// error, its turn timeout, or too many invalid responses.
type TurnFailed struct {
	Agent string
	Turn  TurnID
	Err   string
	// CircuitOpen says the failure came from an open circuit breaker: the
	// request was never sent, so it says nothing about the agent and does
	// not spend its failure budget (see MaxCircuitWaits for the bound).
	CircuitOpen bool `json:",omitempty"`
	// Failure is the failure as data (Err is its message); absent in logs
	// of earlier versions.
	Failure *Failure `json:",omitempty"`
}

// DeadlinePassed is the run deadline (Settings.Timeout) passing.
type DeadlinePassed struct{}

// BudgetSpent is the run having spent MaxCostUSD or MaxTokens; Reason says
// which and how much.
type BudgetSpent struct{ Reason string }

// Presented is the end of the winner's presentation (or of the direct
// call): its text, how many client tool calls it made, or why it failed.
type Presented struct {
	Text      string
	ToolCalls int    `json:",omitempty"`
	Err       string `json:",omitempty"`
	// Failure is Err as data, when the call failed.
	Failure *Failure `json:",omitempty"`
}

// Evaluated is the winner's post-evaluation verdict: submit (Restart
// false) or restart with a reason and instructions for the next attempt.
// An evaluation that failed counts as submit: it must not throw away a
// good answer.
type Evaluated struct {
	Agent        string `json:",omitempty"` // who evaluated: the winner (for the record; absent in older logs)
	Restart      bool   `json:",omitempty"`
	Reason       string `json:",omitempty"`
	Instructions string `json:",omitempty"`
}

// RoundTimeUp is a stage of a turn's round timer passing (SetTimer with
// TimerRound): the soft limit, the hard limit one grace later, or the
// cutoff one more grace later (rounds.go).
type RoundTimeUp struct {
	Agent string
	Turn  TurnID
	Stage RoundStage
}

// CriteriaSet gives the checklist its criteria before Start: those the
// evaluation_criteria_generator had written for the question (checklist.go).
// Logged like any input, so a replay scores against the same criteria.
type CriteriaSet struct {
	Criteria []Criterion
	// Agent, when set, makes them that agent's own criteria
	// (decomposition mode's per-subtask criteria), not the team's.
	Agent string `json:",omitempty"`
}

// GraceExpired is the presentation grace passing after the deadline.
type GraceExpired struct{}

// Interrupted is the caller cancelling the run.
type Interrupted struct{ Reason string }

func (Start) input()          {}
func (Proposed) input()       {}
func (TurnFailed) input()     {}
func (DeadlinePassed) input() {}
func (BudgetSpent) input()    {}
func (Presented) input()      {}
func (Evaluated) input()      {}
func (GraceExpired) input()   {}
func (RoundTimeUp) input()    {}
func (CriteriaSet) input()    {}
func (Interrupted) input()    {}
