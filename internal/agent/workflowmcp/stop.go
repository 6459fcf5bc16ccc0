package workflowmcp

import (
	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/tool"
)

// setTaskTools offers the workflow tools of task: in decomposition mode
// new_answer and stop (never vote) and, when checklist-gated,
// submit_checklist once work exists; otherwise setTools' for labels.
func (s *Server) setTaskTools(task agent.Task, labels []string) {
	if !task.Decomposition {
		s.mcp.RemoveTools(coord.ToolStop)
		s.setTools(labels, task.Checklist)
		return
	}
	s.setTools(nil, false)
	s.mcp.AddTool(mcpTool(tool.Stop()), s.handler(func(j tool.Judge) tool.Tool { return tool.StopTool(j) }))
	if task.Checklist && len(labels) > 0 {
		s.mcp.AddTool(mcpTool(tool.Checklist()), s.handler(func(j tool.Judge) tool.Tool { return tool.ChecklistTool(j) }))
	}
}
