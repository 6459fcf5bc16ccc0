package agent

import (
	"context"
	"strings"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Present streams the winner's final answer. It offers no tools: the
// presentation is text for the user.
func Present(ctx context.Context, m llm.Model, base llm.Request, system, user string, emit Emitter) (string, llm.Usage, error) {
	text, _, usage, err := PresentWithTools(ctx, m, base, system, user, nil, emit)
	return text, usage, err
}

// PresentWithTools is Present for an API client that brought its own tools:
// the winner may answer by calling them, and the calls go back to the client.
func PresentWithTools(ctx context.Context, m llm.Model, base llm.Request, system, user string, tools []llm.ToolDef, emit Emitter) (string, []llm.ToolCall, llm.Usage, error) {
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

// PostEvaluate asks the winner to submit or reject the final answer. Any
// failure or a response without a post-evaluation call counts as submit:
// an evaluation problem must not throw away a good answer.
func PostEvaluate(ctx context.Context, m llm.Model, base llm.Request, system, user string, emit Emitter) Evaluation {
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
