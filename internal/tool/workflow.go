package tool

import (
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
