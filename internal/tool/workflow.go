package tool

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// NewAnswer is offered on every coordination turn.
func NewAnswer() llm.ToolDef {
	return llm.ToolDef{
		Name:        coord.ToolNewAnswer,
		Description: "Provide a new, complete answer that improves on the current answers. Mention any tools you used.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"content": map[string]any{"type": "string", "description": "Your complete answer to the original message."},
			},
			"required": []string{"content"},
		},
	}
}

// Vote is offered only when answers exist; its enum lists exactly the labels
// that have answers, so a model cannot pick one that maps to nothing.
func Vote(labels []string) llm.ToolDef {
	return llm.ToolDef{
		Name:        coord.ToolVote,
		Description: "Vote for the agent whose current answer is best and should be presented as the final answer.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"agent_id": map[string]any{"type": "string", "enum": labels, "description": "Anonymous id of the agent you vote for."},
				"reason":   map[string]any{"type": "string", "description": "Short reason why this answer is best."},
			},
			"required": []string{"agent_id", "reason"},
		},
	}
}

// Submit confirms the final answer during post-evaluation.
func Submit() llm.ToolDef {
	return llm.ToolDef{
		Name:        coord.ToolSubmit,
		Description: "Confirm that the final answer fully addresses the original message.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirmed": map[string]any{"type": "boolean", "enum": []bool{true}},
			},
			"required": []string{"confirmed"},
		},
	}
}

// Restart asks for a new orchestration attempt during post-evaluation.
func Restart() llm.ToolDef {
	return llm.ToolDef{
		Name:        coord.ToolRestart,
		Description: "Reject the final answer and restart coordination with feedback for every agent.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"reason":       map[string]any{"type": "string", "description": "What is wrong with the final answer."},
				"instructions": map[string]any{"type": "string", "description": "Concrete guidance for the next attempt."},
			},
			"required": []string{"reason", "instructions"},
		},
	}
}

// Judge asks the coordinator to decide a proposed workflow action.
type Judge func(act coord.Action) coord.Verdict

// NewAnswerTool is new_answer as a Tool: Call proposes the answer to judge.
func NewAnswerTool(judge Judge) Tool { return workflowTool{NewAnswer(), judge} }

// VoteTool is vote as a Tool, offering exactly labels: Call proposes the
// vote to judge.
func VoteTool(labels []string, judge Judge) Tool { return workflowTool{Vote(labels), judge} }

// workflowTool is a workflow tool whose call is an action for the
// coordinator: the arguments are read as coord.ParseAction reads them, and
// the verdict is the result. A rejection is an error result carrying the
// coordinator's reason, for the model to correct.
type workflowTool struct {
	def   llm.ToolDef
	judge Judge
}

func (w workflowTool) Def() llm.ToolDef { return w.def }

func (w workflowTool) Call(_ context.Context, args json.RawMessage) Result {
	act, reason, _, ok := coord.ParseAction([]coord.Call{{Name: w.def.Name, Arguments: string(args)}}, "")
	if !ok {
		return Result{Content: reason, IsError: true}
	}
	v := w.judge(act)
	switch v.Outcome {
	case coord.Rejected:
		return Result{Content: v.Message, IsError: true}
	case coord.Stale:
		return Result{Content: cmp.Or(v.Message, "The answers changed before this action was recorded; it was not counted.")}
	}
	if act.Kind == coord.ActVote {
		return Result{Content: "Vote recorded for " + act.Label + "."}
	}
	if act.Kind == coord.ActStop {
		return Result{Content: "Stop recorded (" + act.Label + ")."}
	}
	return Result{Content: "Answer recorded as " + cmp.Or(v.Label, "a new answer") + "."}
}

// Checklist is submit_checklist, offered under checklist-gated voting to an
// agent that has answered: it scores every current answer on every
// criterion, and the coordinator's verdict (vote, or iterate with
// new_answer) comes back as the result.
func Checklist() llm.ToolDef {
	return llm.ToolDef{
		Name: coord.ToolChecklist,
		Description: "Score every current answer on every evaluation criterion (E1, E2, …) from 0 to 10 before you vote or " +
			"give a new answer. The result is your verdict: vote, or iterate with new_answer. Call it once per set of answers.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"scores": map[string]any{
					"type": "object",
					"description": "Per answer label, per criterion id, a score 0-10 with a short reason: " +
						`{"agent1": {"E1": {"score": 8, "reasoning": "…"}, "E2": {…}}, "agent2": {…}}`,
				},
				"report_path": map[string]any{"type": "string", "description": "Optional: a file in your workspace with the evidence behind the scores."},
			},
			"required": []string{"scores"},
		},
	}
}

// ChecklistTool is submit_checklist as a Tool: Call puts the scores to
// judge; the verdict's message is the result (an error result when the
// scores were refused, saying why).
func ChecklistTool(judge Judge) Tool { return checklistTool{judge} }

type checklistTool struct{ judge Judge }

func (checklistTool) Def() llm.ToolDef { return Checklist() }

func (c checklistTool) Call(_ context.Context, args json.RawMessage) Result {
	var a struct {
		Scores json.RawMessage `json:"scores"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a.Scores) == 0 {
		return Result{Content: `submit_checklist needs a "scores" object: {"agent1": {"E1": 8, …}, …}`, IsError: true}
	}
	v := c.judge(coord.Action{Kind: coord.ActChecklist, Content: string(a.Scores)})
	return Result{Content: v.Message, IsError: v.Outcome != coord.Accepted}
}
