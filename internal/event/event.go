package event

import (
	"slices"
	"time"
)

// Type names what happened. The string values are written to
// coordination_events.json and are part of the log contract.
type Type string

const (
	RunStarted     Type = "run_started"     // Text = question; Agents lists the team
	TurnStarted    Type = "turn_started"    // Agent begins a turn; Labels = answers it sees
	TextDelta      Type = "text_delta"      // Agent streamed content (droppable)
	ReasoningDelta Type = "reasoning_delta" // Agent streamed reasoning (droppable)
	ToolCalled     Type = "tool_called"     // Agent called a non-workflow tool; Text = name
	AnswerAccepted Type = "new_answer"      // Text = answer; Label = its label "agentN.M"
	VoteAccepted   Type = "vote_cast"       // Target/TargetLabel = voted for; Reason
	ActionRejected Type = "action_rejected" // Reason = why; Text = the corrective message
	TurnRestarted  Type = "restart"         // Agent's turn was cancelled by a newer answer (Target = its author)
	TurnFailed     Type = "turn_failed"     // Err = provider error; Agent will retry
	TurnEnded      Type = "turn_ended"      // a turn finished (any way); carries its token usage
	AgentFailed    Type = "agent_failed"    // Agent left the run after its failure budget; Err
	Timeout        Type = "timeout"         // Agent = "" for the whole run, else a turn timeout
	BudgetExceeded Type = "budget_exceeded" // max_cost_usd or max_total_tokens reached; Reason says which
	WinnerSelected Type = "winner_selected" // Agent = winner; Votes = tally; Reason = how
	FinalStarted   Type = "final_started"   // Agent presents
	FinalDelta     Type = "final_delta"     // presentation content (droppable)
	FinalAnswer    Type = "final_answer"    // Text = final answer; Reason = "presentation" or why fallback
	PostEvaluation Type = "post_evaluation" // Text = "submit" or "restart"; Reason, Instructions in Text
	RunRestarted   Type = "orchestration_restart"
	RunFinished    Type = "run_finished" // Status = completed|timeout|failed|interrupted
)

// Deltas are the streamed-text event types: one per token or so, they are
// most of a run's events, and the only ones a subscriber may lose.
var Deltas = []Type{TextDelta, ReasoningDelta, FinalDelta}

// Droppable reports whether subscribers may lose this event under load:
// whether it is one of the Deltas.
func (t Type) Droppable() bool { return slices.Contains(Deltas, t) }

// Event is one thing that happened during a run.
type Event struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Type    Type      `json:"type"`
	Attempt int       `json:"attempt,omitempty"` // orchestration attempt, from 1
	Epoch   int       `json:"epoch"`             // accepted answers so far in this attempt
	Agent   string    `json:"agent,omitempty"`   // real agent id

	Label       string         `json:"label,omitempty"`        // e.g. answer label "agent2.1"
	Labels      []string       `json:"labels,omitempty"`       // anonymous labels the agent was shown
	Text        string         `json:"text,omitempty"`         // answer, delta, final text, question
	Target      string         `json:"target,omitempty"`       // real id a vote is for / an answer that caused a restart
	TargetLabel string         `json:"target_label,omitempty"` // anonymous label of Target as the voter saw it
	Reason      string         `json:"reason,omitempty"`
	Err         string         `json:"error,omitempty"`
	Status      string         `json:"status,omitempty"`
	Agents      []string       `json:"agents,omitempty"`
	Votes       map[string]int `json:"votes,omitempty"`
	// Tokens are the usage of the turn that ended with this event, if any.
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"` // priced from the model catalogue; 0 when unknown
}
