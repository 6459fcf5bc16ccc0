package coord

import "fmt"

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
	// Report is what the submit_checklist tool found at the diagnostic
	// report's path (checklist_report.go); nil when the agent has no
	// workspace to write one in.
	Report *ReportFacts `json:",omitempty"`
}

// ActionKind is new_answer or vote, or a submit_checklist call (whose
// Content is the scores, as JSON), which a turn makes before either.
type ActionKind int

const (
	ActNewAnswer ActionKind = iota
	ActVote
	ActChecklist
	ActStop  // stop (decomposition mode): Reason is the summary, Label the status
	ActDraft // draft_approach: Content is its arguments, as JSON (draft.go)
)

func (k ActionKind) String() string {
	switch k {
	case ActVote:
		return "vote"
	case ActChecklist:
		return ToolChecklist
	case ActDraft:
		return ToolDraft
	case ActStop:
		return ToolStop
	}
	return "new_answer"
}

// MarshalText writes the kind by its tool name, so logged inputs read well.
func (k ActionKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind written by MarshalText.
func (k *ActionKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "vote":
		*k = ActVote
	case "new_answer":
		*k = ActNewAnswer
	case ToolChecklist:
		*k = ActChecklist
	case ToolDraft:
		*k = ActDraft
	case ToolStop:
		*k = ActStop
	default:
		return fmt.Errorf("unknown action %q", b)
	}
	return nil
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
	// Rev is the accepted answer's revision: the author's answer count, this
	// answer included (0 for votes).
	Rev int `json:",omitempty"`
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

// MarshalText writes the outcome by name, so logged commands read well.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome written by MarshalText.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range [...]string{"accepted", "rejected", "stale"} {
		if n == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %q", b)
}

// RunStatus is how a run ended. The library, the server, the logs and the
// CLI all use this one type (orchestrator.Status and massgen.Status are
// aliases of it).
type RunStatus string

const (
	RunCompleted   RunStatus = "completed"
	RunTimedOut    RunStatus = "timeout"     // the deadline passed with no answer at all
	RunFailed      RunStatus = "failed"      // every agent failed
	RunInterrupted RunStatus = "interrupted" // the caller cancelled the run
)
