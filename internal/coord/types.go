package coord

// TurnID identifies one turn of one agent. IDs increase over a Machine's
// life, so a stale result (from a turn that was cancelled or superseded) is
// recognised by its ID alone.
type TurnID int

// Status is where an agent stands in the current epoch.
type Status int

const (
	Idle    Status = iota // waiting for a turn to be started
	Working               // a turn is in flight
	Voted                 // voted in the current epoch
	Failed                // out of the run: its failure budget is spent
)

func (s Status) String() string {
	return [...]string{"idle", "working", "voted", "failed"}[s]
}

// Answer is one agent's current answer as shown to others.
type Answer struct {
	Label   string // anonymous label, "agent1".."agentK" by config order over agents with answers
	Agent   string // real id (never shown to coordinating agents)
	Content string
	Rev     int // how many answers this agent has given, this one included
}

// Action is what a turn proposes to end with.
type Action struct {
	Kind    ActionKind
	Content string // new_answer content
	Label   string // vote target as the agent named it
	Reason  string // vote reason
}

// ActionKind is new_answer or vote.
type ActionKind int

const (
	ActNewAnswer ActionKind = iota
	ActVote
)

func (k ActionKind) String() string {
	if k == ActVote {
		return "vote"
	}
	return "new_answer"
}

// Verdict is the machine's answer to a proposed action.
type Verdict struct {
	Outcome Outcome
	// Message is the corrective text for a rejection: it goes back to the
	// model as a tool result so the next attempt can do better.
	Message string
	// Label is the label the accepted answer got, or the vote's target label.
	Label string
	// Target is the real id a vote was for.
	Target string
}

// Outcome classifies a Verdict.
type Outcome int

const (
	Accepted Outcome = iota
	Rejected         // invalid; the turn may retry with Message
	Stale            // the turn was superseded; its result is ignored
)

func (o Outcome) String() string {
	return [...]string{"accepted", "rejected", "stale"}[o]
}
