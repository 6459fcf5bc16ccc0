package event

import (
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// The event kinds. Each embeds Header; field names say what coord knows
// at the moment, so no consumer re-derives labels, tallies or epochs.

// RunStarted opens a run.
type RunStarted struct {
	Header
	Question string
	Team     []AgentInfo // in config order
}

// TurnStarted: Agent begins a coordination turn that shows it Shown.
type TurnStarted struct {
	Header
	Agent  string
	Prompt string      // the user message of the turn
	Shown  []AnswerRef // the answers the agent sees, by anonymous label
	Reason string      // why it starts late, e.g. a retry backoff ("" when at once)
}

// TextDelta is content Agent streamed (droppable).
type TextDelta struct {
	Header
	Agent, Text string
	// Tool is set when the text is the answer the model is writing as the
	// arguments of that workflow tool (new_answer's content, as it
	// streams), not text of its own.
	Tool string
}

// ReasoningDelta is reasoning Agent streamed (droppable).
type ReasoningDelta struct {
	Header
	Agent, Text string
}

// ToolCalled: Agent called a tool that is not a workflow tool.
type ToolCalled struct {
	Header
	Agent    string
	Tool     string
	Args     string // arguments, a preview
	Result   string // result, a preview
	IsError  bool
	Duration time.Duration
}

// ModelCalled: one request of Agent to its model ended (a turn makes one
// per response: tool steps and corrective attempts are requests of their
// own; the final presentation's too). Usage is that request's; the turn's
// total is on TurnEnded, so readers that sum usage must not add these.
// Failure is set when the request failed.
type ModelCalled struct {
	Header
	Agent    string
	Model    string
	Usage    Usage
	Duration time.Duration
	Failure  *coord.Failure
}

// ToolProgress: a tool Agent called, still running, reported progress
// (an MCP progress or log notification): Progress of Total (0 when
// unknown) and a message. Droppable, as deltas are: the next one says more.
type ToolProgress struct {
	Header
	Agent    string
	Tool     string
	Progress float64
	Total    float64
	Message  string
}

// AnswerAccepted: coord accepted Agent's new answer.
type AnswerAccepted struct {
	Header
	Agent     string
	Content   string
	Label     string      // stable log label, "agent<position>.<revision>"
	AnonLabel string      // the anonymous label the others will see it as
	Answers   []AnswerRef // the whole answer set after this answer
	// Workspace is the snapshot of the author's workspace taken with the
	// answer ("" when it has none); the logs keep a copy. A path on this
	// machine for the log writer, so not part of the Record.
	Workspace string
}

// VoteAccepted: coord counted Agent's vote.
type VoteAccepted struct {
	Header
	Agent        string
	Target       string // real id voted for
	TargetLabel  string // anonymous label the voter named
	TargetAnswer string // stable log label of the answer voted for
	Reason       string
}

// ActionRejected: Agent's workflow action was refused; the turn goes on.
type ActionRejected struct {
	Header
	Agent, Reason string
}

// TurnRestarted: Agent's turn was cancelled by Cause's newer answer.
type TurnRestarted struct {
	Header
	Agent, Cause, Reason string
}

// TurnFailed: Agent's turn failed (provider error, idle stream); it will
// be retried unless its failure budget is spent.
type TurnFailed struct {
	Header
	Agent, Err string
	Failure    *coord.Failure // Err as data
}

// TurnEnded: a turn (or presentation call) finished, any way; Usage is
// what it spent, cancelled turns included. ToolRounds counts its responses
// that ran tools (each a round trip to the model beyond the one that
// answered or voted); the calls themselves are ToolCalled events.
type TurnEnded struct {
	Header
	Agent string
	Usage
	ToolRounds int
}

// AgentFailed: Agent left the run; Failure is its last failure as data.
type AgentFailed struct {
	Header
	Agent, Err, Reason string
	Failure            *coord.Failure
}

// Timeout: the run deadline passed (Agent == "") or Agent's turn timed out
// (Failure says how, as data).
type Timeout struct {
	Header
	Agent, Err, Reason string
	Failure            *coord.Failure
}

// BudgetExceeded: max_cost_usd or max_total_tokens was reached.
type BudgetExceeded struct {
	Header
	Reason string
}

// WinnerSelected ends coordination.
type WinnerSelected struct {
	Header
	Agent   string
	Votes   map[string]int // real id → votes in the final epoch
	How     string         // plurality, tie broken by config order, …
	Label   string         // stable log label of the winning answer
	Answers []AnswerRef    // the final answer set
}

// FinalStarted: Agent writes the final answer.
type FinalStarted struct {
	Header
	Agent  string
	Prompt string // system and user message the presenter got
	Mode   string // "presentation" or "direct"
}

// FinalDelta is presentation content (droppable).
type FinalDelta struct {
	Header
	Agent, Text string
}

// FinalAnswer is the answer of the run. Reason is "presentation", or why
// the stored answer stands instead.
type FinalAnswer struct {
	Header
	Agent, Text, Reason string
	Usage
}

// PostEvaluation: Agent checked the final answer.
type PostEvaluation struct {
	Header
	Agent   string
	Verdict string // "submit" or "restart"
	Reason  string
	Usage
}

// RunRestarted: post-evaluation asked for another attempt.
type RunRestarted struct {
	Header
	Agent, Reason, Instructions string
}

// RunFinished closes a run.
type RunFinished struct {
	Header
	Status string // completed|timeout|failed|interrupted
	Winner string
	Err    string
	// Fallback says why the final answer is the winner's stored answer
	// rather than a presentation ("" when the presentation made it);
	// GraceExpired is true when that is because the presentation did not
	// end by the run deadline plus the presentation grace.
	Fallback     string
	GraceExpired bool
	// Failures are why the agents left, when the run failed: the last
	// failure of each agent that had one, in config order.
	Failures []coord.Failure
}

func (RunStarted) Type() Type     { return TypeRunStarted }
func (TurnStarted) Type() Type    { return TypeTurnStarted }
func (TextDelta) Type() Type      { return TypeTextDelta }
func (ReasoningDelta) Type() Type { return TypeReasoningDelta }
func (ToolCalled) Type() Type     { return TypeToolCalled }
func (ToolProgress) Type() Type   { return TypeToolProgress }
func (ModelCalled) Type() Type    { return TypeModelCalled }
func (AnswerAccepted) Type() Type { return TypeAnswerAccepted }
func (VoteAccepted) Type() Type   { return TypeVoteAccepted }
func (ActionRejected) Type() Type { return TypeActionRejected }
func (TurnRestarted) Type() Type  { return TypeTurnRestarted }
func (TurnFailed) Type() Type     { return TypeTurnFailed }
func (TurnEnded) Type() Type      { return TypeTurnEnded }
func (AgentFailed) Type() Type    { return TypeAgentFailed }
func (Timeout) Type() Type        { return TypeTimeout }
func (BudgetExceeded) Type() Type { return TypeBudgetExceeded }
func (WinnerSelected) Type() Type { return TypeWinnerSelected }
func (FinalStarted) Type() Type   { return TypeFinalStarted }
func (FinalDelta) Type() Type     { return TypeFinalDelta }
func (FinalAnswer) Type() Type    { return TypeFinalAnswer }
func (PostEvaluation) Type() Type { return TypePostEvaluation }
func (RunRestarted) Type() Type   { return TypeRunRestarted }
func (RunFinished) Type() Type    { return TypeRunFinished }

func (e RunStarted) withHead(h Header) Event     { e.Header = h; return e }
func (e TurnStarted) withHead(h Header) Event    { e.Header = h; return e }
func (e TextDelta) withHead(h Header) Event      { e.Header = h; return e }
func (e ReasoningDelta) withHead(h Header) Event { e.Header = h; return e }
func (e ToolCalled) withHead(h Header) Event     { e.Header = h; return e }
func (e ToolProgress) withHead(h Header) Event   { e.Header = h; return e }
func (e ModelCalled) withHead(h Header) Event    { e.Header = h; return e }
func (e AnswerAccepted) withHead(h Header) Event { e.Header = h; return e }
func (e VoteAccepted) withHead(h Header) Event   { e.Header = h; return e }
func (e ActionRejected) withHead(h Header) Event { e.Header = h; return e }
func (e TurnRestarted) withHead(h Header) Event  { e.Header = h; return e }
func (e TurnFailed) withHead(h Header) Event     { e.Header = h; return e }
func (e TurnEnded) withHead(h Header) Event      { e.Header = h; return e }
func (e AgentFailed) withHead(h Header) Event    { e.Header = h; return e }
func (e Timeout) withHead(h Header) Event        { e.Header = h; return e }
func (e BudgetExceeded) withHead(h Header) Event { e.Header = h; return e }
func (e WinnerSelected) withHead(h Header) Event { e.Header = h; return e }
func (e FinalStarted) withHead(h Header) Event   { e.Header = h; return e }
func (e FinalDelta) withHead(h Header) Event     { e.Header = h; return e }
func (e FinalAnswer) withHead(h Header) Event    { e.Header = h; return e }
func (e PostEvaluation) withHead(h Header) Event { e.Header = h; return e }
func (e RunRestarted) withHead(h Header) Event   { e.Header = h; return e }
func (e RunFinished) withHead(h Header) Event    { e.Header = h; return e }
