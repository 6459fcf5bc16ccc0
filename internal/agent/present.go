package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// present streams the winner's final answer. It offers no tools: the
// presentation is text for the user.
func present(ctx context.Context, m llm.Model, base llm.Request, system, user string, emit Emitter) (string, llm.Usage, error) {
	text, _, usage, err := presentWithTools(ctx, m, base, system, user, nil, emit)
	return text, usage, err
}

// presentWithTools is present for an API client that brought its own tools:
// the winner may answer by calling them, and the calls go back to the client.
func presentWithTools(ctx context.Context, m llm.Model, base llm.Request, system, user string, tools []llm.ToolDef, emit Emitter) (string, []llm.ToolCall, llm.Usage, error) {
	req := base
	req.Messages = []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}}
	req.Tools = tools
	r, err := collect(ctx, m, &req, emit)
	return strings.TrimSpace(r.text), r.calls, r.usage, err
}

// Evaluation is the winner's judgement of the final answer.
type Evaluation struct {
	Restart      bool
	Reason       string
	Instructions string
	Usage        llm.Usage
}

// postEvaluate asks the winner to submit or reject the final answer. Any
// failure or a response without a post-evaluation call counts as submit:
// an evaluation problem must not throw away a good answer.
func postEvaluate(ctx context.Context, m llm.Model, base llm.Request, system, user string, emit Emitter) Evaluation {
	req := base
	req.Messages = []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}}
	req.Tools = []llm.ToolDef{tool.Submit(), tool.Restart()}
	r, err := collect(ctx, m, &req, emit)
	ev := Evaluation{Usage: r.usage}
	if err != nil {
		return ev
	}
	for _, c := range r.calls {
		if c.Name != coord.ToolRestart {
			continue
		}
		args := decodeArgs(c.Arguments)
		ev.Restart, ev.Reason, ev.Instructions = true, args["reason"], args["instructions"]
		break
	}
	return ev
}

// presentation is a final presentation in which the winner may use its own
// tools (a workspace's file and command tools) before it writes the final
// answer: their calls run and the model goes on, up to MaxToolSteps tool
// steps. Calls of the client's tools end it, and go back to the client.
type presentation struct {
	Model   llm.Model
	Request llm.Request // Model and Params set
	System  string
	User    string
	Client  []llm.ToolDef // an API client's tools
	Tools   *tool.Set     // the agent's own tools for the presentation
	Emit    Emitter
	// MaxToolSteps overrides the package default when > 0.
	MaxToolSteps int
	// ToolTimeout bounds each tool call when > 0.
	ToolTimeout time.Duration
	// OnTool is told about every call of one of Tools.
	OnTool func(call llm.ToolCall, res tool.Result, d time.Duration)
}

// Run plays the presentation: the final text, the client's tool calls (if
// the model made any) and the usage of every request.
func (p *presentation) Run(ctx context.Context) (string, []llm.ToolCall, llm.Usage, error) {
	// Tools still starting (an MCP server's, in planning mode) are waited for.
	own, err := p.Tools.Resolve(ctx)
	if err != nil {
		return "", nil, llm.Usage{}, err
	}
	p.Tools = own
	req := p.Request
	req.Messages = []llm.Message{{Role: llm.RoleSystem, Content: p.System}, {Role: llm.RoleUser, Content: p.User}}
	req.Tools = append(p.Tools.Defs(), p.Client...)
	maxSteps := cmp.Or(max(p.MaxToolSteps, 0), MaxToolSteps)
	runner := &llmTurn{ToolTimeout: p.ToolTimeout, OnTool: p.OnTool}
	var usage llm.Usage
	for step := 0; ; step++ {
		r, err := collect(ctx, p.Model, &req, p.Emit)
		usage.Add(r.usage)
		if err != nil {
			return "", nil, usage, err
		}
		var client []llm.ToolCall
		s := sorted{results: make([]tool.Result, len(r.calls))}
		for i, c := range r.calls {
			_, own := p.Tools.Lookup(c.Name)
			switch {
			case own:
				s.run = append(s.run, i)
			case slices.ContainsFunc(p.Client, func(d llm.ToolDef) bool { return d.Name == c.Name }):
				client = append(client, c)
			default:
				s.results[i] = tool.Errorf("tool %q is not available here. Available tools: %s.", c.Name, strings.Join(p.Tools.Names(), ", "))
			}
		}
		if len(client) > 0 || len(r.calls) == 0 {
			return strings.TrimSpace(r.text), client, usage, nil
		}
		if step >= maxSteps {
			return "", nil, usage, fmt.Errorf("tool step limit reached: the presentation kept calling tools for %d steps (limit %d)", step+1, maxSteps)
		}
		runner.runTools(ctx, r.calls, s, p.Tools)
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: r.text, ToolCalls: r.calls})
		req.Messages = append(req.Messages, toolMessages(r.calls, s.results)...)
	}
}
