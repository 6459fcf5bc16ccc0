package agent

import (
	"context"
	"iter"
	"maps"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// LLM is the agent made of a model and its own tools: our tool loop
// (llmTurn, presentation, postEvaluate) behind the Agent interface.
type LLM struct {
	ID        string // the agent's id, for its failures
	Backend   string // backend type, for its failures
	ModelName string
	Model     llm.Model
	Params    map[string]any // provider parameters passed through
	// FinalParams are parameters of the final presentation or direct
	// answer only, over Params (a client's structured output).
	FinalParams map[string]any
	// Tools are offered in coordination turns next to the workflow tools;
	// PresentTools in the final presentation (nil: the presentation is
	// text, and may call only the client's tools).
	Tools, PresentTools *tool.Set
	// Checklist serves submit_checklist and draft_approach (checklist-gated
	// voting): the report is read, and the plan laid, through it.
	Checklist tool.ChecklistKit
	// CompressionRatio is compression_target_ratio: the share of a turn's
	// own messages kept as they are when a context overflow compacts the
	// rest (compact.go); 0 means DefaultCompressionRatio.
	CompressionRatio float64
}

// Run plays task. The tool loop reports through callbacks, some from the
// tools' own goroutines (progress notifications), so it runs in a
// goroutine of its own and its reports reach the caller's range loop in
// order through a channel.
func (a *LLM) Run(ctx context.Context, task Task, inbox *Inbox) iter.Seq[Outcome] {
	return func(yield func(Outcome) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		p := &pump{out: make(chan Outcome, 16)}
		go func() {
			d := a.play(ctx, task, inbox, p)
			p.send(d)
			p.close()
		}()
		for o := range p.out {
			if !yield(o) {
				cancel()
				for range p.out { // let the tool loop end
				}
				return
			}
		}
	}
}

// pump carries outcomes from the tool loop's goroutines to Run's range
// loop. Progress that arrives after the loop ended, or while the reader
// is behind, is dropped: the next notification says more.
type pump struct {
	mu     sync.Mutex
	out    chan Outcome
	closed bool
}

func (p *pump) send(o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if _, progress := o.(ToolProgress); progress {
		select {
		case p.out <- o:
		default:
		}
		return
	}
	p.out <- o
}

func (p *pump) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	close(p.out)
}

// modelCalled makes the pump a modelObserver: each request, as it ends.
func (p *pump) modelCalled(model string, u llm.Usage, d time.Duration, err error) {
	p.send(ModelCall{Model: model, Usage: u, Duration: d, Failure: FailureOf(err, "", "", model)})
}

// Text and Reasoning make the pump the tool loop's Emitter.
func (p *pump) Text(s string)      { p.send(Text{Text: s}) }
func (p *pump) Reasoning(s string) { p.send(Reasoning{s}) }

// ToolText makes the pump a ToolTextEmitter: an answer's text as it streams.
func (p *pump) ToolText(tool, s string) { p.send(Text{Text: s, Tool: tool}) }

func (a *LLM) play(ctx context.Context, task Task, inbox *Inbox, p *pump) Done {
	ctx = tool.WithProgress(ctx, func(pr tool.Progress) {
		p.send(ToolProgress{Tool: pr.Tool, Progress: pr.Progress, Total: pr.Total, Message: pr.Message})
	})
	onTool := func(call llm.ToolCall, res tool.Result, d time.Duration) {
		p.send(ToolUsed{Tool: call.Name, Args: call.Arguments, Result: res.Content, IsError: res.IsError, Duration: d})
	}
	switch task.Kind {
	case TaskCoordinate:
		t := &llmTurn{
			Model: a.Model, Request: llm.Request{Model: a.ModelName, Params: a.Params},
			System: task.System, User: task.User, Answers: task.Answers, Epoch: task.Epoch,
			Emit: p, Tools: a.Tools, MaxToolSteps: task.Limits.MaxToolSteps, ToolTimeout: task.Limits.ToolTimeout,
			OnTool: onTool,
			Judge: func(seen int, act coord.Action) coord.Verdict {
				p.send(Propose{Seen: seen, Action: act})
				return inbox.Verdict(ctx)
			},
			Updates:          inbox,
			OnReject:         func(reason string) { p.send(Rejected{reason}) },
			Checklist:        task.Checklist,
			CompressionRatio: a.CompressionRatio,
			Decomposition:    task.Decomposition, Subtasks: task.Subtasks,
		}
		t.Kit = a.Checklist
		res := t.Run(ctx)
		return Done{Usage: res.Usage, Steps: res.Steps, Attempts: res.Attempts, Failure: a.failure(res.Err)}
	case TaskPresent, TaskDirect:
		req := a.finalRequest()
		if task.Kind == TaskPresent && a.PresentTools != nil {
			pr := &presentation{Model: a.Model, Request: req, System: task.System, User: task.User, Client: task.ClientTools,
				Tools: a.PresentTools, Emit: p, MaxToolSteps: task.Limits.MaxToolSteps, ToolTimeout: task.Limits.ToolTimeout, OnTool: onTool}
			text, calls, usage, err := pr.Run(ctx)
			return Done{Text: text, ToolCalls: calls, Usage: usage, Failure: a.failure(err)}
		}
		text, calls, usage, err := presentWithTools(ctx, a.Model, req, task.System, task.User, task.ClientTools, p)
		return Done{Text: text, ToolCalls: calls, Usage: usage, Failure: a.failure(err)}
	case TaskEvaluate:
		ev := postEvaluate(ctx, a.Model, llm.Request{Model: a.ModelName, Params: a.Params}, task.System, task.User, nil)
		return Done{Usage: ev.Usage, Evaluation: &ev}
	}
	return Done{Failure: &coord.Failure{Kind: coord.FailOther, Agent: a.ID, Message: "unknown task kind " + task.Kind.String()}}
}

func (a *LLM) failure(err error) *coord.Failure { return FailureOf(err, a.ID, a.Backend, a.ModelName) }

// finalRequest is the request of a final presentation or direct answer:
// the agent's parameters, and its FinalParams over them.
func (a *LLM) finalRequest() llm.Request {
	params := a.Params
	if len(a.FinalParams) > 0 {
		params = maps.Clone(a.Params)
		if params == nil {
			params = map[string]any{}
		}
		maps.Copy(params, a.FinalParams)
	}
	return llm.Request{Model: a.ModelName, Params: params}
}
