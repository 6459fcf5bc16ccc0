package coord

// Command is something the orchestrator must do. It is one of the types below.
type Command interface{ command() }

// StartTurn asks for a new turn of Agent that sees Answers (the answer set of
// Epoch). Vote is offered only when Answers is non-empty.
type StartTurn struct {
	Agent   string
	Turn    TurnID
	Epoch   int
	Answers []Answer
}

// CancelTurn aborts an in-flight turn at once (restart policy): its request
// is cancelled so no more tokens are spent on an outdated answer set.
type CancelTurn struct {
	Agent  string
	Turn   TurnID
	Reason string // e.g. "new answer from agent2"
	Cause  string // real id whose answer caused it
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
}

// Present ends coordination: Winner writes the final answer.
type Present struct {
	Winner  string
	Answer  Answer         // the winner's stored answer (the fallback)
	Answers []Answer       // every current answer, for the presentation prompt
	Tally   map[string]int // real id → votes in the final epoch
	Votes   []Vote         // the counted votes, in config order of voters
	How     string         // "plurality", "tie broken by config order", "no votes: first answer in config order", "timeout: …"
}

// Fail ends the run without a winner.
type Fail struct {
	Reason  string
	Timeout bool // the run deadline passed with no answer at all
}

func (StartTurn) command()   {}
func (CancelTurn) command()  {}
func (Inject) command()      {}
func (AgentFailed) command() {}
func (Present) command()     {}
func (Fail) command()        {}

// Vote is one counted vote.
type Vote struct {
	Voter  string
	Target string // real id
	Label  string // as the voter saw it
	Reason string
}
