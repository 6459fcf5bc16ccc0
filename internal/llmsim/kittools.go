package llmsim

import "strings"

// kitTools are massgen's own tools that a coding-agent CLI is served over
// MCP (task planning, subagents): a scenario scripts a call of one by its
// bare name, and the simulator calls it by the name the request offers it
// under ("mcp__massgen_tools__create_task_plan" in Claude Code,
// "mcp_massgen_tools_create_task_plan" in Gemini CLI), as it does the
// workflow tools.
var kitTools = []string{
	"create_task_plan", "add_task", "update_task_status", "edit_task", "get_task_plan",
	"get_ready_tasks", "get_blocked_tasks", "delete_task", "clear_task_plan",
	"spawn_subagents", "list_subagents", "continue_subagent", "send_message_to_subagent", "cancel_subagent",
}

// kitName is the kit tool a function name stands for, under any prefix a
// client puts before an MCP tool's name, or "" when it stands for none.
func kitName(n string) string {
	for _, k := range kitTools {
		if n == k || strings.HasSuffix(n, "_"+k) || strings.HasSuffix(n, "-"+k) {
			return k
		}
	}
	return ""
}
