package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
)

// changesTheWorld are the built-in tools that write or run something. An
// MCP tool is judged by its own annotations (readOnlyHint), custom tools
// (functions in this process's config) are not blocked, as upstream.
var changesTheWorld = []string{"write_file", "edit_file", "delete_file", "create_directory", "execute_command"}

// defaultPlanningInstruction is the note agents get in planning mode
// unless orchestrator.coordination.planning_mode_instruction replaces it.
const defaultPlanningInstruction = "Planning mode is on: while the agents coordinate, tools that change files, run commands " +
	"or act on other systems are blocked. Do not try to execute: describe precisely what you would do " +
	"(which files you would write and what they would hold, which commands and tool calls you would make) in your answer. " +
	"If your answer wins, those tools are unblocked for your final presentation, and you carry your plan out then."

// plans reports whether planning mode blocks t during coordination.
func plans(t tool.Tool) bool {
	if e, ok := t.(tool.Effects); ok {
		return !e.ReadOnly()
	}
	return slices.Contains(changesTheWorld, t.Def().Name)
}

func planningRefusal(t tool.Tool) string {
	name := t.Def().Name
	msg := fmt.Sprintf("Tool '%s' blocked during coordination (planning mode active): it was not run", name)
	if e, ok := t.(tool.Effects); ok && e.Destructive() {
		msg += ", and its server says it may destroy or overwrite data"
	}
	return msg + ". Describe in your answer what you would do with it; if your answer wins, you will run it in the final presentation."
}

// withPlanning applies orchestrator.coordination.enable_planning_mode:
// each agent's tools that change the world refuse while agents coordinate,
// decided by the lists above and MCP annotations, never by a model; the
// winner gets all its tools back for the final presentation. agents is
// left as it is (a team may be shared by concurrent runs).
func withPlanning(o config.Orchestrator, agents []orchestrator.Agent) []orchestrator.Agent {
	if !o.PlanningMode {
		return agents
	}
	note := defaultPlanningInstruction
	if s := strings.TrimSpace(o.PlanningInstruction); s != "" {
		note = s
	}
	out := slices.Clone(agents)
	for i := range out {
		a := &out[i]
		if a.Tools.Len() == 0 && !a.Tools.Pending() {
			continue
		}
		a.PresentTools = a.Tools
		a.Tools = a.Tools.Blocking(plans, planningRefusal)
		a.SystemMessage = strings.TrimSpace(a.SystemMessage + "\n\n" + note)
	}
	return out
}
