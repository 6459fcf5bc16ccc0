package orchestrator

import (
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Agent is one team member, ready to run.
type Agent struct {
	ID            string
	Backend       string // backend type, for display and logs
	ModelName     string
	Model         llm.Model
	Params        map[string]any // provider parameters passed through
	SystemMessage string
	Simulated     bool
	// Cost prices a usage record of this agent's model (nil: unknown, 0).
	Cost func(llm.Usage) float64
	// Tools are the agent's own tools, offered in its coordination turns
	// next to the workflow tools (nil: none).
	Tools *tool.Set
}

// Options configure a run. Zero values take the defaults of DESIGN.md §2.
type Options struct {
	Agents            []Agent
	VotingSensitivity string // lenient|balanced|strict
	Novelty           string // lenient|balanced|strict
	MaxAnswers        int    // per agent; 0 = unlimited
	Inject            bool   // restart_policy: inject (default restart)
	// DependentFirstAnswer lets others' answers interrupt an agent's first
	// turn (independent_first_answer: false). The default keeps first
	// answers independent.
	DependentFirstAnswer bool
	// Eager starts an agent's next turn at once even while another agent's
	// independent first answer is in flight (wait_for_first_answers: false).
	// By default such turns wait: that answer would cancel them anyway.
	Eager         bool
	FailureBudget int           // consecutive failed turns before an agent leaves; default 3
	Timeout       time.Duration // whole run; default 30 min
	TurnTimeout   time.Duration // per turn; 0 = none
	// PresentationGrace bounds the final presentation when the run deadline
	// has passed or is near; default 60 s.
	PresentationGrace time.Duration
	MaxRestarts       int // max_orchestration_restarts; > 0 enables post-evaluation
	// Presentation chooses whether the winner writes a final presentation
	// after consensus (default PresentAuto).
	Presentation Presentation
	// Direct runs a one-agent team as a single plain model call, without
	// the workflow tools (use_orchestrator_for_single_agent: false). It is
	// ignored for a team of several agents.
	Direct bool
	// History holds the earlier user/assistant turns of a conversation;
	// every agent sees them before the question.
	History []llm.Message
	// ClientTools are an API client's own tools. Agents are told about them;
	// the winner may call them in its final presentation, and the run then
	// ends with Result.ToolCalls for the client to execute.
	ClientTools []llm.ToolDef
	// MaxCostUSD and MaxTokens stop coordination once the run has spent
	// that much (0 = no limit); the best answer so far is then presented.
	MaxCostUSD float64
	MaxTokens  int64
	Events     *event.Broker // where events go; nil means none are kept
	Now        func() time.Time
}

// Presentation is whether the winner presents after consensus. Upstream
// MassGen always does, and a one-agent team then pays for a call that
// restates the answer it has just voted for.
type Presentation int

const (
	// PresentAuto presents unless the team is a single agent: with no other
	// answers to combine, its winning answer is already the final answer.
	PresentAuto Presentation = iota
	// PresentAlways always presents (ui.enable_final_presentation: true).
	PresentAlways
	// PresentNever makes the winning answer the final answer
	// (ui.enable_final_presentation: false).
	PresentNever
)

// Status is how a run ended.
type Status string

const (
	Completed   Status = "completed"
	TimedOut    Status = "timeout"     // the deadline passed with no answer at all
	Failed      Status = "failed"      // every agent failed
	Interrupted Status = "interrupted" // the caller cancelled the context
)

// Result is what a run produced. A run that did not complete still carries
// every answer it had.
type Result struct {
	Status Status
	Final  string // the final answer (empty unless Status is Completed)
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
	Tally    map[string]int
	Answers  []coord.Answer
	Usage    map[string]llm.Usage // per agent, all turns
	Cost     map[string]float64   // USD per agent, from the model catalogue
	Attempts int
	Duration time.Duration
	Err      error // why the run failed, when it did
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
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	if o.PresentationGrace <= 0 {
		o.PresentationGrace = 60 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Events == nil {
		o.Events = event.NewBroker()
	}
}
