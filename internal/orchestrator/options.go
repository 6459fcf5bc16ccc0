package orchestrator

import (
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Agent is one team member, ready to run.
type Agent struct {
	ID string
	// Impl plays the agent's tasks. Nil: the LLM agent (agent.LLM) made of
	// Model, Params, FinalParams, Tools and PresentTools below.
	Impl      agent.Agent
	Backend   string // backend type, for display and logs
	ModelName string
	Model     llm.Model
	Params    map[string]any // provider parameters passed through
	// FinalParams are parameters of its final presentation (or direct
	// answer) only, over Params: a client's structured output (massgen
	// serve's response_format), in this provider's terms.
	FinalParams   map[string]any
	SystemMessage string
	Simulated     bool
	// Cost prices a usage record of this agent's model (nil: unknown, 0).
	Cost func(llm.Usage) float64
	// Tools are the agent's own tools, offered in its coordination turns
	// next to the workflow tools (nil: none).
	Tools *tool.Set
	// PresentTools are the tools the agent may use in its final
	// presentation, a workspace's (nil: none; the presentation is text).
	PresentTools *tool.Set
	// OnPresent, when set, is called with true just before the agent's
	// final presentation starts and with false once it has ended: the
	// workspace guard opens the write context paths for it.
	OnPresent func(on bool)
	// BeforeTurn, when set, is called just before each of the agent's
	// coordination turns, and its final presentation, starts, with the
	// answers the turn shows under their anonymous labels: the workspace
	// lays out the others' snapshots under the same labels. It is called
	// from the turn's own goroutine (views.go), never for a turn already
	// superseded, and never twice at once for one agent; an update injected
	// into a live turn calls it from the loop.
	BeforeTurn func(shown []coord.Answer)
	// BeforeRound, when set, is called just before each of the agent's
	// coordination turns starts, before BeforeTurn and under the same
	// rules, but never for an update injected into a live turn nor for
	// the final presentation: write_mode lays the agent's fresh copies of
	// the context paths for the round.
	BeforeRound func()
	// Checklist is what checklist-gated voting's tools need of the agent
	// (its Guard for the diagnostic report, its task plan for
	// draft_approach); the zero value has neither.
	Checklist tool.ChecklistKit
}

// Options configure a run. The rules are coord.Settings, whose zero values
// take the defaults of DESIGN.md §2 (coord.Settings.WithDefaults).
type Options struct {
	Agents []Agent
	coord.Settings
	// History holds the earlier user/assistant turns of a conversation;
	// every agent sees them before the question.
	History []llm.Message
	// ClientTools are an API client's own tools. Agents are told about them;
	// the winner may call them in its final presentation, and the run then
	// ends with Result.ToolCalls for the client to execute.
	ClientTools []llm.ToolDef
	// Personas, when set, has a persona written for each agent before the
	// run (persona_generator; personas.go).
	Personas *Personas
	// Subtasks are decomposition mode's (Settings.Decomposition) given
	// and generated subtasks (decompose.go).
	Subtasks *Subtasks
	// FinalInstruction, when set, is added to the final presentation's
	// (or direct answer's) prompt: the shape of answer the client asked
	// for (massgen serve's response_format).
	FinalInstruction string
	// CompressionRatio is the share of a turn's own messages an LLM agent
	// keeps as they are when a context overflow compacts the rest
	// (agent.LLM.CompressionRatio; 0: the default).
	CompressionRatio float64
	Events           *event.Broker // where events go; nil means none are kept
	Now              func() time.Time
	// Trace, when set, is called with every input the run feeds its
	// coordination machine and the commands it got back, in order, from the
	// run's loop goroutine. The inputs are the run's replay log (coord.Log,
	// whose Config is MachineConfig).
	Trace func(coord.Input, []coord.Command)
	// Activities, when set, follow the bytes of each agent's requests
	// (NewActivities), so a status display can tell a silent provider.
	Activities Activities
	// Seed are answers accepted before this run (coord.Config.Seed): a
	// resumed session turn starts from them, published as AnswerAccepted
	// events when the run starts, and their agents are not asked again.
	Seed []coord.Seed
	// SeedVotes are votes counted before this run (coord.Config.SeedVotes):
	// a resumed turn's last epoch. Their voters are not asked again; they
	// are published as VoteAccepted events when the run starts.
	SeedVotes []coord.Vote
	// Snapshot, when set, is called from the run's loop as an answer is
	// accepted (with the answer's stable label): its author's turn is waiting for the verdict (its files are
	// at rest) and no turn that shows the answer has started yet. It
	// returns the directory of the snapshot of the author's workspace taken
	// with the answer ("" when none), which the AnswerAccepted event carries.
	Snapshot func(agent, label string) string
}

// Seed is an answer accepted before a run began (Options.Seed).
type Seed = coord.Seed

// MachineConfig is the coord.Config a run with these options builds its
// machine from: the first line of its replay log. Its settings have their
// defaults applied, so the log says which rules were in force.
func (o *Options) MachineConfig() coord.Config {
	ids := make([]string, len(o.Agents))
	for i, a := range o.Agents {
		ids[i] = a.ID
	}
	return coord.Config{Agents: ids, Settings: o.Settings.WithDefaults(), ClientTools: len(o.ClientTools) > 0, Seed: o.Seed,
		SeedVotes: o.SeedVotes}
}

// Status is how a run ended (one type for library, server, logs and CLI).
type Status = coord.RunStatus

const (
	Completed   = coord.RunCompleted
	TimedOut    = coord.RunTimedOut    // the deadline passed with no answer at all
	Failed      = coord.RunFailed      // every agent failed
	Interrupted = coord.RunInterrupted // the caller cancelled the context
)

// Result is what a run produced. A run that did not complete still carries
// every answer it had.
type Result struct {
	Status Status
	// Final is the final answer: empty unless Status is Completed, or
	// Interrupted during the presentation (then the winner's stored answer).
	Final string
	// ToolCalls are calls of Options.ClientTools made by the winner's
	// presentation, for the client to execute.
	ToolCalls []llm.ToolCall
	Winner    string
	How       string // how the winner was chosen
	// Fallback says why the winner's stored answer was used instead of a
	// presentation ("" when the presentation succeeded).
	Fallback string
	// Deadline is true when the run deadline cut coordination short.
	Deadline bool
	// GraceExpired is true when the final presentation did not end by the
	// run deadline plus Settings.PresentationGrace: it was cancelled and the
	// winner's stored answer is Final (Fallback says so too).
	GraceExpired bool
	Tally        map[string]int
	Answers      []coord.Answer
	Usage        map[string]llm.Usage // per agent, all turns
	Cost         map[string]float64   // USD per agent, from the model catalogue
	Tools        map[string]ToolUse   // per agent, all turns (zero for an agent without tools)
	Attempts     int
	Duration     time.Duration
	Err          error // why the run failed, when it did
	// Failures are why the agents left a failed run, as data: the last
	// failure of each agent that had one, in config order.
	Failures []coord.Failure
}

// ToolUse is what an agent did with its own tools (workflow tools aside):
// Calls made, Errors among them, and Rounds, its responses that ran tools
// (each a model request beyond those that answered or voted).
type ToolUse struct {
	Calls, Errors, Rounds int
}

// TotalCost sums cost over agents.
func (r *Result) TotalCost() float64 {
	var c float64
	for _, x := range r.Cost {
		c += x
	}
	return c
}

// TotalUsage sums usage over agents.
func (r *Result) TotalUsage() llm.Usage {
	var u llm.Usage
	for _, x := range r.Usage {
		u.Add(x)
	}
	return u
}

func (o *Options) defaults() {
	o.Settings = o.Settings.WithDefaults()
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Events == nil {
		o.Events = event.NewBroker()
	}
}
