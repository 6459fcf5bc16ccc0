package tool

import (
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// Stop is decomposition mode's terminate action (coordination_mode:
// decomposition): the agent says its subtask is done, or blocked, instead
// of voting. Upstream v0.1.73's schema.
func Stop() llm.ToolDef {
	return llm.ToolDef{
		Name:        coord.ToolStop,
		Description: "Signal that your assigned subtask is complete and well-integrated with other agents' work.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"summary": map[string]any{"type": "string", "description": "What you accomplished and how it connects to other agents' work"},
				"status": map[string]any{"type": "string", "enum": []string{coord.StopComplete, coord.StopBlocked},
					"description": "Whether your subtask is complete or blocked on something"},
			},
			"required": []string{"summary", "status"},
		},
	}
}

// StopTool is stop as a Tool: Call proposes the stop to judge.
func StopTool(judge Judge) Tool { return workflowTool{Stop(), judge} }

// DecompositionTools are the workflow tools of a decomposition turn:
// new_answer and stop, never vote.
func DecompositionTools(judge Judge) []Tool {
	return []Tool{NewAnswerTool(judge), StopTool(judge)}
}
