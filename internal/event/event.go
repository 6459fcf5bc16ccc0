package event

import (
	"fmt"
	"slices"
	"time"
)

// Type names a kind of event. The string values are written to
// coordination_events.json(l) and are part of the log contract.
type Type string

const (
	TypeRunStarted     Type = "run_started"
	TypeTurnStarted    Type = "turn_started"
	TypeTextDelta      Type = "text_delta"
	TypeReasoningDelta Type = "reasoning_delta"
	TypeToolCalled     Type = "tool_called"
	TypeModelCalled    Type = "model_called"
	TypeToolProgress   Type = "tool_progress"
	TypeAnswerAccepted Type = "new_answer"
	TypeVoteAccepted   Type = "vote_cast"
	TypeActionRejected Type = "action_rejected"
	TypeTurnRestarted  Type = "restart"
	TypeTurnFailed     Type = "turn_failed"
	TypeTurnEnded      Type = "turn_ended"
	TypeAgentFailed    Type = "agent_failed"
	TypeTimeout        Type = "timeout"
	TypeBudgetExceeded Type = "budget_exceeded"
	TypeWinnerSelected Type = "winner_selected"
	TypeFinalStarted   Type = "final_started"
	TypeFinalDelta     Type = "final_delta"
	TypeFinalAnswer    Type = "final_answer"
	TypePostEvaluation Type = "post_evaluation"
	TypeRunRestarted   Type = "orchestration_restart"
	TypeRunFinished    Type = "run_finished"
)

// Types lists every event type, in the order a run meets them.
var Types = []Type{TypeRunStarted, TypeTurnStarted, TypeTextDelta, TypeReasoningDelta, TypeToolProgress, TypeToolCalled, TypeModelCalled,
	TypeAnswerAccepted, TypeVoteAccepted, TypeActionRejected, TypeTurnRestarted, TypeTurnFailed, TypeTurnEnded,
	TypeAgentFailed, TypeTimeout, TypeBudgetExceeded, TypeWinnerSelected, TypeFinalStarted, TypeFinalDelta,
	TypeFinalAnswer, TypePostEvaluation, TypeRunRestarted, TypeRunFinished}

// Deltas are the streamed-text event types: one per token or so, they are
// most of a run's events, and the only ones a subscriber may lose.
var Deltas = []Type{TypeTextDelta, TypeReasoningDelta, TypeFinalDelta}

// Ticks are the event types that say how something in progress is going
// (a tool's progress notifications): a display shows the latest, so they
// may be lost under load as Deltas may, but they are steps in words, not
// streamed text.
var Ticks = []Type{TypeToolProgress}

// Bookkeeping are the event types that record accounting rather than
// progress (a turn's token usage): logs keep them, displays leave them out.
var Bookkeeping = []Type{TypeTurnEnded, TypeModelCalled}

// Droppable reports whether subscribers may lose this event under load:
// whether it is one of the Deltas or the Ticks.
func (t Type) Droppable() bool { return slices.Contains(Deltas, t) || slices.Contains(Ticks, t) }

// Header is what every event carries. Seq and Time are stamped by the
// Broker; Attempt and Epoch by the emitter (the orchestrator knows them).
type Header struct {
	Seq     uint64
	Time    time.Time
	Attempt int // orchestration attempt, from 1
	Epoch   int // answers accepted in this attempt before the event
}

// Head returns the header; every event type has it through embedding.
func (h Header) Head() Header { return h }

// Event is one thing that happened during a run. It is one of the types in
// kinds.go: the set is closed (as coord.Command's is), so a switch over
// the types is complete and ToRecord / FromRecord cover every kind.
type Event interface {
	Type() Type
	Head() Header
	// withHead returns the event with its header replaced (the broker
	// stamps Seq and Time on a copy: events are values, never shared).
	withHead(Header) Event
	// record is the event's flat JSON form, header fields excluded.
	record() Record
}

// AgentInfo is one agent of the team as the run announces it.
type AgentInfo struct {
	ID        string `json:"id"`
	Backend   string `json:"backend,omitempty"`
	Model     string `json:"model,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
}

// AnswerRef names one answer both ways: Label is the anonymous label the
// agents were shown ("agent1", numbered by config order over the agents
// with answers, so it shifts as agents answer), Answer is the label the
// logs use ("agent3.2": config position and revision, stable for the
// attempt), Agent is the real id.
type AnswerRef struct {
	Label  string `json:"label"`
	Agent  string `json:"agent"`
	Answer string `json:"answer"`
}

// AnswerLabel is the stable log label of an answer: the author's position
// in the config (from 1) and the answer's revision (from 1), upstream's
// "agent<position>.<revision>".
func AnswerLabel(position, revision int) string {
	return fmt.Sprintf("agent%d.%d", position, revision)
}

// Usage is what one request (or turn) cost.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64 // priced from the model catalogue; 0 when unknown
}

// Add sums u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CostUSD + o.CostUSD}
}

// At returns e with its attempt and epoch set (Seq and Time stay for the
// broker to stamp): how an emitter that knows them files an event.
func At(e Event, attempt, epoch int) Event {
	h := e.Head()
	h.Attempt, h.Epoch = attempt, epoch
	return e.withHead(h)
}

// Stamped returns e with its sequence number and time set, as a broker
// stamps them: for feeding a log writer or a view without a broker
// (replaying a log, tests).
func Stamped(e Event, seq uint64, t time.Time) Event {
	h := e.Head()
	h.Seq, h.Time = seq, t
	return e.withHead(h)
}
