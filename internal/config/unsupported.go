package config

import "fmt"

// Upstream MassGen keys that this version reads and keeps but does not act
// on yet. A config that uses them loads (so MassGen configs work unchanged),
// and says which of its settings are ignored, instead of silently behaving
// differently from upstream.
var unsupportedFeature = map[string]string{
	"cwd":                        "workspaces",
	"mcp_servers":                "MCP tools",
	"allowed_tools":              "MCP tool filters",
	"exclude_tools":              "MCP tool filters",
	"custom_tools":               "custom tools",
	"context_paths":              "context paths",
	"enable_web_search":          "provider web search",
	"enable_code_execution":      "provider code execution",
	"enable_code_interpreter":    "provider code interpreter",
	"enable_mcp_command_line":    "command execution",
	"upload_files":               "file uploads",
	"snapshot_storage":           "workspaces",
	"agent_temporary_workspace":  "workspaces",
	"dspy":                       "DSPy paraphrasing",
	"memory":                     "memory",
	"session_id":                 "sessions",
	"skip_coordination_rounds":   "skip_coordination_rounds",
	"debug_final_answer":         "debug_final_answer",
	"enable_planning_mode":       "planning mode",
	"enable_agent_task_planning": "task planning",
	"use_skills":                 "skills",
}

// unsupported warns about a key of a feature this version ignores, unless
// its value turns the feature off anyway (null, false, empty).
func (d *decoder) unsupported(p *pair, key string) {
	feature, ok := unsupportedFeature[p.key]
	if !ok || p.val.isNull() || p.val.kind == kindBool && !p.val.b || p.val.kind == kindSeq && len(p.val.items) == 0 {
		return
	}
	d.warnAt(p.keyPos, key, fmt.Sprintf("'%s' is accepted but ignored: this version does not support %s yet", p.key, feature), "")
}
