package custom

import "strings"

// Prefix is what upstream MassGen puts before a custom tool's name, so that
// prompts and filters written for it keep working.
const Prefix = "custom_tool__"

// ToolName is the name a custom tool is offered under: custom_tool__<name>,
// unless the name has the prefix already or the tool's category is
// "builtin" (upstream's rule).
func ToolName(name, category string) string {
	if category == "builtin" || strings.HasPrefix(name, Prefix) {
		return name
	}
	return Prefix + name
}
