package llmsim

import "strings"

// mcpTool reports whether the function n is the tool name as a
// coding-agent CLI offers a tool it was served over MCP: Claude Code's and
// Codex's "mcp__<server>__<name>", Gemini CLI's "mcp_<server>_<name>".
// A scenario then scripts any such tool (an agent's custom tools, its own
// MCP servers' tools) by its bare name, as it does the workflow and kit
// tools (workflowName, kitName).
func mcpTool(n, name string) bool {
	switch {
	case strings.HasPrefix(n, "mcp__"):
		return strings.HasSuffix(n, "__"+name)
	case strings.HasPrefix(n, "mcp_"):
		return strings.HasSuffix(n, "_"+name)
	}
	return false
}
