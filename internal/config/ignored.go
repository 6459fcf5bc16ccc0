package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Every key this package accepts is in exactly one of two classes (a test
// checks it): implementedKeys, which this version acts on, and keys of
// features it does not implement yet, named by ignoredFeature. A key of the
// second class loads, so upstream configs work unchanged, but draws a
// warning at its line and is listed by Config.IgnoredFeatures, so that a
// run can say it did not do everything its config asked.
//
// The provider built-in tool switches (builtinFlags) are implemented where
// the backend's provider has the tool and ignored elsewhere.
var implementedKeys = []string{
	// top level
	"agents", "agent", "orchestrator", "ui", "timeout_settings",
	// agent
	"id", "backend", "system_message",
	// orchestrator
	"voting_sensitivity", "answer_novelty_requirement", "max_new_answers_per_agent", "timeout",
	"agent_turn_timeout_seconds", "coordination", "restart_policy", "independent_first_answer",
	"wait_for_first_answers", "max_cost_usd", "max_total_tokens", "max_consecutive_failures",
	"fairness_enabled", "fairness_lead_cap_answers", "voting_threshold", "checklist_criteria_inline", "max_new_answers_global",
	"evaluation_criteria_generator", "persona_generator",
	// decomposition mode (decompose.go)
	"coordination_mode", "presenter_agent", "task_decomposer", "subtask",
	"max_midstream_injections_per_round", "defer_peer_updates_until_restart",
	"allow_midstream_peer_updates_before_checklist_submit",
	// orchestrator.coordination
	"max_orchestration_restarts",
	// timeout_settings
	"orchestrator_timeout_seconds", "stream_idle_timeout_seconds", "presentation_grace_seconds",
	"initial_round_timeout_seconds", "subsequent_round_timeout_seconds", "round_timeout_grace_seconds",
	// ui
	"display_type", "type", "logging_enabled", "use_orchestrator_for_single_agent", "enable_final_presentation",
	// backend: the Azure v1 API has no api-version, so there is nothing to ignore
	"api_version",
	// backend: custom tools (customtools.go) and MCP servers (mcp.go)
	"custom_tools", "mcp_servers", "allowed_tools", "exclude_tools",
	// backend: workspaces, context paths and commands (workspace.go)
	"cwd", "context_paths", "enable_mcp_command_line", "command_line_execution_mode",
	"command_line_allowed_commands", "command_line_blocked_commands",
	// orchestrator: snapshots, the others' files, planning mode (workspace.go)
	"snapshot_storage", "agent_temporary_workspace", "enable_planning_mode", "planning_mode_instruction",
	"command_line_allow_unsandboxed", "command_line_allow_network",
	// backend: code-based tools (codetools.go)
	"enable_code_based_tools", "shared_tools_directory", "direct_mcp_servers", "exclude_file_operation_mcps",
	"custom_tools_path", "auto_discover_custom_tools", "exclude_custom_tools",
	// backend: the sandbox's limits (workspace.go)
	"command_line_max_processes", "workspace_max_size_mb",
	// backend: docker mode's container (docker.go)
	"command_line_docker_image", "command_line_docker_memory_limit", "command_line_docker_cpu_limit",
	"command_line_docker_network_mode", "command_line_docker_enable_sudo", "command_line_docker_credentials",
	"command_line_docker_packages",
	// v0.1.73 keys massgen acts on: skip_final_presentation is
	// enable_final_presentation: false; massgen has no agent selector to
	// skip; its MCP client filters tools itself and offers no roots, which
	// is what upstream's wrappers are for; it runs the tool calls of one
	// response concurrently (false is warned about in decode_backend.go).
	"skip_final_presentation", "skip_agent_selector",
	// orchestrator.coordination: how much of a turn survives a context
	// overflow's compaction (internal/agent/compact.go)
	"compression_target_ratio",
	"use_mcpwrapped_for_tool_filtering", "use_no_roots_wrapper", "concurrent_tool_execution",
	// orchestrator.coordination: isolated writes, changedocs, fast iteration (isolation.go)
	"write_mode", "drift_conflict_policy", "enable_changedoc", "fast_iteration_mode",
	// orchestrator.coordination: filesystem memory and skills (kit.go)
	"enable_memory_filesystem_mode", "learning_capture_mode", "disable_final_only_round_capture_fallback",
	"use_skills", "skills_directory", "massgen_skills", "load_previous_session_skills",
	// orchestrator.coordination: subagents (subagent.go)
	"enable_subagents", "subagent_default_timeout", "subagent_min_timeout", "subagent_max_timeout",
	"subagent_max_concurrent", "subagent_types", "subagent_orchestrator", "background_subagents",
	// orchestrator.coordination: task planning (tasks.go)
	"enable_agent_task_planning", "task_planning_filesystem_mode", "max_tasks_per_plan",
	// checklist-gated voting's report gate, draft_approach's floors, the criteria preset (checklist.go)
	"checklist_require_gap_report", "gap_report_mode", "checklist_criteria_preset", "improvements",
}

var builtinFlags = []string{"enable_web_search", "enable_code_execution", "enable_code_interpreter"}

// ignoredFeatures names the feature each not-yet-implemented key belongs to,
// for the warning "'cwd' is accepted but ignored: this version does not
// support workspaces yet".
var ignoredFeatures = map[string]string{
	// workspaces and files
	"use_two_tier_workspace":     "two-tier workspaces",
	"enforce_read_before_delete": "the read-before-delete guard", "upload_files": "file uploads", "media_max_file_size_mb": "file uploads",
	// tools (custom tools, MCP servers and their filters are implemented:
	// these are upstream's sub-features of them)
	"max_mcp_message_history": "a cap on MCP message history",
	"max_concurrent_tools":    "a configurable tool concurrency (massgen runs up to 4 calls at once)",
	"enable_multimodal_tools": "multimodal tools",
	"multimodal_config":       "multimodal tools", "hooks": "hooks",
	"enable_web_search":       "provider web search for this backend type",
	"enable_code_execution":   "provider code execution for this backend type",
	"enable_code_interpreter": "provider code interpreter for this backend type",
	// generation backends of the generation tools
	"image_generation_backend": "image generation", "image_generation_model": "image generation",
	"video_generation_backend": "video generation", "video_generation_model": "video generation",
	"audio_generation_backend": "audio generation", "audio_generation_model": "audio generation",
	// other backend kinds' settings (claude_code and ag2 do not run in this version)
	"permission_mode": "Claude Code", "disallowed_tools": "Claude Code", "max_thinking_tokens": "Claude Code",
	"agent_config": "AG2", "group_config": "AG2",
	// provider features of v0.1.73's backends that massgen's adapters do not drive yet
	"websocket_mode":           "the Responses API over WebSocket (websocket_mode)",
	"enable_tool_search":       "Claude tool search",
	"tool_search_variant":      "Claude tool search",
	"enable_strict_tool_use":   "Claude strict tool use",
	"enable_programmatic_flow": "Claude programmatic tool calling",
	"enable_nlip":              featNLIP, "nlip": featNLIP, "nlip_config": featNLIP,
	// coordination
	"vote_only":                "vote-only agents",
	"skip_coordination_rounds": "skip_coordination_rounds", "debug_final_answer": "debug_final_answer",
	"dspy": "DSPy paraphrasing",
	// sessions and memory
	"memory": "memory", "session_id": "sessions", "session_storage": "sessions",
	// set by upstream at run time, not by users
	"enable_rate_limit": "upstream's rate limiter", "instance_id": "upstream run-time settings",
	"_config_path": "upstream run-time settings", "agent_id": "upstream run-time settings",
	"agent_temporary_workspace_parent": "upstream run-time settings", "context_write_access_enabled": "upstream run-time settings",
	// keys upstream's examples write that upstream does not read (placeholderKeys)
	"display": "nothing (upstream ignores it)", "task": "nothing (upstream ignores it)",
	"max_turns": "nothing (upstream ignores it)", "append_system_prompt": "nothing (upstream ignores it)",
	"debug_delay_seconds": "debug delays", "debug_delay_after_n_tools": "debug delays",
	// ui settings that flags own here
	"automation_mode": "ui.automation_mode", "debug": "ui.debug",
}

// ignoredHints say what to do instead, where this version has an equivalent.
var ignoredHints = map[string]string{
	"enable_rate_limit": "use requests_per_minute / tokens_per_minute in the backend",
	"automation_mode":   "use the --automation flag",
	"debug":             "use the --debug flag",
	"session_id":        "pass earlier turns to massgen serve, or --continue later",
}

// ignoredFeature names the feature of a not-yet-implemented key, covering
// the families upstream keeps growing (command_line_*, enable_*_generation).
func ignoredFeature(key string) (string, bool) {
	if slices.Contains(implementedKeys, key) {
		return "", false
	}
	if f, ok := ignoredFeatures[key]; ok {
		return f, true
	}
	if f, ok := upstreamFeature(key); ok {
		return f, true
	}
	switch {
	case strings.HasPrefix(key, "command_line_"):
		return "this command-line setting", true
	case strings.HasPrefix(key, "enable_") && strings.HasSuffix(key, "_generation"):
		return strings.TrimSuffix(strings.TrimPrefix(key, "enable_"), "_generation") + " generation", true
	}
	return "", false
}

// turnsOff reports whether a value asks for nothing (null, false, empty),
// so that ignoring its key changes nothing.
func turnsOff(n *node) bool {
	switch n.kind {
	case kindNull:
		return true
	case kindBool:
		return !n.b
	case kindString:
		return n.s == ""
	case kindSeq:
		return len(n.items) == 0
	case kindMap:
		return len(n.pairs) == 0
	}
	return false
}

// unsupported warns about a key of a feature this version ignores, unless
// its value turns the feature off anyway.
func (d *decoder) unsupported(p *pair, key string) {
	feature, ok := ignoredFeature(p.key)
	if !ok || slices.Contains(implementedKeys, p.key) || turnsOff(p.val) {
		return
	}
	d.ignore(p.keyPos, key, p.key, fmt.Sprintf("'%s' is accepted but ignored: this version does not support %s yet", p.key, feature),
		ignoredHints[p.key])
}

// ignore warns that a setting is ignored and records it for IgnoredFeatures
// as name, plus the agent it belongs to. Every warning that says a key is
// ignored goes through here, so the list and the warnings always agree.
func (d *decoder) ignore(at pos, key, name, msg, sugg string) {
	d.warnAt(at, key, msg, sugg)
	if d.agentID != "" {
		name += " (agent " + d.agentID + ")"
	}
	d.cfg.ignored = append(d.cfg.ignored, ignoredSetting{at, name})
}

// ignoredSetting is one entry of IgnoredFeatures, with its place in the
// file so that the list reads in file order (the decoder visits sections
// in its own order).
type ignoredSetting struct {
	at   pos
	name string
}

// IgnoredFeatures lists the settings of the config that a run does not act
// on: keys of features this version does not implement yet and keys nobody
// knows (typos). Each entry is the key as written, followed by " (agent
// ID)" inside an agent, or "key: value" for a value that is ignored:
// "hooks", "enable_image_generation (agent gpt)". The strings are stable,
// for scripts; the list is in file order and empty for a config built in
// code.
func (c *Config) IgnoredFeatures() []string {
	sorted := slices.SortedStableFunc(slices.Values(c.ignored), func(a, b ignoredSetting) int {
		return cmp.Or(cmp.Compare(a.at.line, b.at.line), cmp.Compare(a.at.col, b.at.col))
	})
	out := make([]string, len(sorted))
	for i, s := range sorted {
		out[i] = s.name
	}
	return out
}
