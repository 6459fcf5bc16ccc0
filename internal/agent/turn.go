package agent

import (
	"context"
	"fmt"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// MaxAttempts is how many responses a turn may take to produce a valid
// workflow action before it counts as a failed turn.
const MaxAttempts = 3

// Turn is one coordination turn of one agent.
type Turn struct {
	Model   llm.Model
	Request llm.Request // Model and Params set; Messages and Tools are filled in by Run
	System  string      // coordination system prompt
	User    string      // coordination user message (task + answers)
	Answers []coord.Answer
	Epoch   int // epoch of Answers
	Emit    Emitter
	// Judge submits a proposed action to the coordinator, which judges it
	// against the state at this moment. seen is the epoch of the answer set
	// the model saw when it decided.
	Judge func(seen int, act coord.Action) coord.Verdict
	// Updates delivers newer answer sets (restart_policy: inject). Nil when
	// the policy is restart: then a newer answer cancels the turn instead.
	Updates <-chan coord.StartTurn
	// OnReject is told about every rejected attempt (for events and logs).
	OnReject func(reason string)
}

// Result is how a turn ended.
type Result struct {
	Verdict  coord.Verdict // the final verdict when an action was judged
	Action   coord.Action
	Usage    llm.Usage
	Attempts int
	// Err is set when the turn ended without an accepted or stale action:
	// a provider error, a cancelled context, or MaxAttempts invalid responses.
	Err error
}

// Run plays the turn to its end.
func (t *Turn) Run(ctx context.Context) Result {
	var res Result
	req := t.Request
	req.Messages = []llm.Message{{Role: llm.RoleSystem, Content: t.System}, {Role: llm.RoleUser, Content: t.User}}
	answers, seen := t.Answers, t.Epoch
	lastReason := ""
	for res.Attempts < MaxAttempts {
		res.Attempts++
		// Deliver any answer set that arrived since the last request, so the
		// model never decides on a view we already know is stale.
		for drained := false; !drained && t.Updates != nil; {
			select {
			case u := <-t.Updates:
				answers, seen = u.Answers, u.Epoch
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: UpdateMessage(answers)})
			default:
				drained = true
			}
		}
		req.Tools = workflowTools(answers)
		r, err := collect(ctx, t.Model, &req, t.Emit)
		res.Usage.Add(r.usage)
		if err != nil {
			res.Err = err
			return res
		}
		calls := make([]coord.Call, len(r.calls))
		for i, c := range r.calls {
			calls[i] = coord.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: r.text, ToolCalls: r.calls})
		act, reason, none, ok := coord.ParseAction(calls, r.text)
		if ok {
			v := t.Judge(seen, act)
			res.Verdict, res.Action = v, act
			if v.Outcome != coord.Rejected {
				return res
			}
			reason = v.Message
		}
		lastReason = reason
		if t.OnReject != nil {
			t.OnReject(reason)
		}
		// Corrective feedback goes back the way the model will read it: as
		// tool results when it called tools, as a user message otherwise.
		if none {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: reason})
			continue
		}
		primary := primaryCall(r.calls)
		for i, c := range r.calls {
			msg := reason
			if i != primary {
				msg = "Not executed: see the error on the " + r.calls[primary].Name + " call of this response."
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "Error: " + msg})
		}
	}
	res.Err = fmt.Errorf("no valid workflow action after %d attempts (last problem: %s)", MaxAttempts, lastReason)
	return res
}

// primaryCall is the call a rejection is about: the first workflow call,
// or the first call when there is none.
func primaryCall(calls []llm.ToolCall) int {
	for i, c := range calls {
		if coord.IsWorkflowTool(c.Name) {
			return i
		}
	}
	return 0
}

func workflowTools(answers []coord.Answer) []llm.ToolDef {
	tools := []llm.ToolDef{tool.NewAnswer()}
	if len(answers) > 0 {
		labels := make([]string, len(answers))
		for i, a := range answers {
			labels[i] = a.Label
		}
		tools = append(tools, tool.Vote(labels))
	}
	return tools
}
