package codegen

import (
	"fmt"
	"strings"
)

// Prompt is the system prompt's section on code-based tools: upstream's
// "Available Tools (Code-Based Access)" (CodeBasedToolsSection), with the
// servers named. Upstream's part on its own Python tool library and its
// ExecutionResult type is left out: massgen does not ship that library.
// location is where servers/ is: the workspace, or the shared tools
// directory (read-only, found through PYTHONPATH).
func Prompt(workspace, shared string, servers []string) string {
	location, note := workspace, ""
	if shared != "" {
		location = shared
		note = fmt.Sprintf("\n\n**Note**: Tools are in a shared read-only location (`%s`) accessible to all agents; "+
			"Python finds them there (PYTHONPATH), so `from servers.<server> import <tool>` works from any directory.", shared)
	}
	list := ""
	if len(servers) > 0 {
		list = "\n\n**Available MCP Servers:** " + strings.Join(servers, ", ")
	}
	return `<code_based_tools>
## Available Tools (Code-Based Access)

Tools are available as **Python code** in your workspace filesystem. Discover and call them like regular Python modules (e.g., use normal search tools such as ` + "`rg` or `grep`" + `)` + note + `

**Directory Structure:**
` + "```" + `
` + location + `/
├── servers/              # MCP tool wrappers (auto-generated, read-only)
│   ├── __init__.py      # Package marker (import from here)
│   └── <server>/
│       ├── __init__.py  # Exports the server's tools
│       └── <tool>.py    # One function per tool, with its docstring
└── custom_tools/         # Your own Python tools

Your workspace/
└── utils/               # CREATE THIS - for your scripts (workflows, async, filtering)
` + "```" + list + `

**Important:** All tools and servers listed here are already configured and ready to use. They are not offered as function calls: run Python with execute_command to use them.

**Tool Discovery (Efficient Patterns):**
` + "```bash" + `
# List servers and functions
ls servers/ && ls servers/<server_name>/

# Get function docstring (first 25 lines)
head -n 25 servers/<server_name>/<function>.py

# Search MCP server functions by name/keyword
grep -ril '<keyword>' servers/
` + "```" + `

**Usage Pattern:**
` + "```python" + `
# Import MCP tools from servers/
from servers.weather import get_forecast

# Use the tools (each returns the tool's result as text; a failed call raises RuntimeError)
weather = get_forecast("San Francisco", days=3)
print(weather)
` + "```" + `

**Important:**
- **CRITICAL**: When running Python scripts that import from ` + "`servers/`" + `, run them with execute_command in your workspace (` + "`work_dir`" + ` left empty or "` + workspace + `"); each command is given what the wrappers need to reach MassGen, which calls the tools for you.
- Write scripts that combine several tools, filter large results or loop over many calls in ` + "`utils/`" + ` and print only what you need.
</code_based_tools>`
}
