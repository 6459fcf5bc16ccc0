package mcp

import "github.com/massgen/massgen/internal/tool"

var _ tool.Effects = (*mcpTool)(nil)

// ReadOnly is the server's readOnlyHint: a tool without annotations may
// change anything (the MCP default), so planning mode blocks it.
func (t *mcpTool) ReadOnly() bool { return t.ann != nil && t.ann.ReadOnlyHint }

// Destructive is the server's destructiveHint, true when absent (the MCP
// default for a tool that is not read-only).
func (t *mcpTool) Destructive() bool {
	if t.ReadOnly() {
		return false
	}
	return t.ann == nil || t.ann.DestructiveHint == nil || *t.ann.DestructiveHint
}
