package coord

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// Workflow tool names. They are part of the contract with MassGen configs
// and prompts, and a client tool may never take one of them.
const (
	ToolNewAnswer = "new_answer"
	ToolVote      = "vote"
	ToolSubmit    = "submit"
	ToolRestart   = "restart_orchestration"
)

// IsWorkflowTool reports whether name is reserved for coordination.
func IsWorkflowTool(name string) bool {
	switch name {
	case ToolNewAnswer, ToolVote, ToolSubmit, ToolRestart:
		return true
	}
	return false
}

// Call is one tool call as the model made it.
type Call struct {
	ID        string
	Name      string
	Arguments string // raw JSON
}

// EnforcementMessage is sent (as a user message) when a response ends
// without any workflow call.
const EnforcementMessage = "You did not call a workflow tool. Finish your work by actually calling exactly one tool: " +
	"`vote` for the best existing answer, or `new_answer` with your complete improved answer."

// ParseAction turns the tool calls of one response into the single workflow
// action they propose. text is the response's plain content, used when
// new_answer comes without content (as upstream does). When the calls are not
// one valid workflow action, ok is false and reason says why, in words meant
// for the model; none reports that no workflow tool was called at all.
func ParseAction(calls []Call, text string) (act Action, reason string, none, ok bool) {
	votes, answers := 0, 0
	terminate := ToolVote // the name of the vote or stop call, for messages
	var first *Call
	for i := range calls {
		switch calls[i].Name {
		case ToolVote, ToolStop:
			votes++
			terminate = calls[i].Name
		case ToolNewAnswer:
			answers++
		default:
			continue
		}
		if first == nil {
			first = &calls[i]
		}
	}
	switch {
	case first == nil && len(calls) > 0:
		return act, fmt.Sprintf("Tool %q is not available here. %s", calls[0].Name, EnforcementMessage), false, false
	case first == nil:
		return act, EnforcementMessage, true, false
	case votes > 0 && answers > 0:
		return act, fmt.Sprintf("You called both %s and new_answer. Choose one: call exactly one of them.", terminate), false, false
	case votes > 1 && terminate == ToolStop:
		return act, "Multiple stop calls are not allowed. Call stop exactly once.", false, false
	case votes > 1:
		return act, "Multiple votes are not allowed. Call vote exactly once.", false, false
	case answers > 1:
		return act, "Multiple new_answer calls are not allowed. Call new_answer exactly once with your complete answer.", false, false
	}
	var args map[string]any
	if strings.TrimSpace(first.Arguments) != "" {
		if err := json.Unmarshal([]byte(first.Arguments), &args); err != nil {
			return act, fmt.Sprintf("The arguments of %s were not valid JSON (%v). Call %s again with a JSON object.", first.Name, err, first.Name), false, false
		}
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	if first.Name == ToolVote {
		return Action{Kind: ActVote, Label: strings.TrimSpace(str("agent_id")), Reason: str("reason")}, "", false, true
	}
	if first.Name == ToolStop {
		return Action{Kind: ActStop, Label: cmp.Or(strings.TrimSpace(str("status")), StopComplete), Reason: str("summary")}, "", false, true
	}
	content := str("content")
	if strings.TrimSpace(content) == "" {
		content = text
	}
	return Action{Kind: ActNewAnswer, Content: content}, "", false, true
}
