package agent

import (
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// Outcome is something a running task reports: one of the types below,
// all plain data. The set is closed, so a consumer's switch is complete.
type Outcome interface{ outcome() }

// Text is content the model streamed: the answer of a presentation or a
// direct call, or what a coordination turn writes as it thinks.
type Text struct {
	Text string
	// Tool, when set, says the text is an argument of that workflow tool's
	// call as it streams (new_answer's content), not the model's own text.
	Tool string
}

// Reasoning is reasoning the model streamed.
type Reasoning struct{ Text string }

// ToolUsed is a call of one of the agent's own tools (workflow tools
// aside), reported once it has ended.
type ToolUsed struct {
	Tool     string
	Args     string // the arguments, whole
	Result   string // the result, whole
	IsError  bool
	Duration time.Duration
}

// ToolProgress is what a running tool says about itself (an MCP progress
// or log notification): Progress of Total (0 when unknown).
type ToolProgress struct {
	Tool     string
	Progress float64
	Total    float64
	Message  string
}

// ModelCall is one request to the agent's model, ended: a task makes one
// per response (tool steps and corrective attempts are requests of their
// own). Usage is this request's; Done's is the task's total. Failure is
// set when the request failed.
type ModelCall struct {
	Model    string
	Usage    llm.Usage
	Duration time.Duration
	Failure  *coord.Failure
}

// Propose is a coordination turn proposing the workflow action it would
// end with. The task then waits for a Verdict in its inbox: accepted or
// stale ends the turn; a rejection comes back to the model to correct.
// Seen is the epoch of the answer set the model decided on.
type Propose struct {
	Seen   int
	Action coord.Action
}

// Rejected is an attempt at a workflow action that was refused (by the
// coordinator, or before it: no workflow call, malformed arguments); the
// turn goes on with Reason shown to the model.
type Rejected struct{ Reason string }

// Done ends every task, however it went.
type Done struct {
	// Usage is what every request of the task cost, the failed one included.
	Usage llm.Usage
	// CostUSD is what the task cost as the agent itself reports it (a
	// coding-agent CLI that prices its own usage: Claude Code's
	// total_cost_usd); 0: not reported. It is the agent's cost only when
	// massgen's model catalogue has no price for its model: a catalogue
	// price wins (orchestrator.Agent.Cost).
	CostUSD float64
	// Steps counts responses that ran tools; Attempts the responses that
	// were attempts at a workflow action.
	Steps, Attempts int
	// Text and ToolCalls are a presentation's or direct call's result.
	Text      string
	ToolCalls []llm.ToolCall
	// Evaluation is an Evaluate task's verdict.
	Evaluation *Evaluation
	// Failure says why the task ended without its result (nil when it
	// succeeded: an accepted or stale action, a presentation, a verdict).
	Failure *coord.Failure
	// State, when not nil, is what the agent keeps for its next task
	// (Task.State); nil keeps the previous state.
	State []byte
}

func (Text) outcome()         {}
func (Reasoning) outcome()    {}
func (ToolUsed) outcome()     {}
func (ToolProgress) outcome() {}
func (ModelCall) outcome()    {}
func (Propose) outcome()      {}
func (Rejected) outcome()     {}
func (Done) outcome()         {}
