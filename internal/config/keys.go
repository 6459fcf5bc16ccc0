package config

import (
	"slices"
	"strings"
)

// The key tables below say which keys upstream MassGen (v0.1.12, plus a few
// documented later additions) knows at each level. A key listed here is
// accepted, and either acted on or warned about as an ignored feature
// (ignored.go); a key missing from every table draws an "unknown key"
// warning with a suggestion. In a backend, the tables decide what stays
// *out* of the provider request; params.go decides what goes in.

var topLevelKeys = append([]string{
	"agents", "agent", "orchestrator", "ui", "timeout_settings", "memory", "session_id", "hooks",
	// placeholders of upstream's examples (placeholderKeys)
	"display", "task",
}, upstreamKeyNames(topLevelUpstream)...)

// v1Keys mark a MassGen v1 config, a different format that upstream rejects
// outright; so do we, before anything else, so the user gets one clear message.
var v1Keys = []string{
	"models", "model_configs", "num_agents", "max_rounds", "consensus_threshold", "voting_enabled", "enable_voting",
}

var agentKeys = append([]string{"id", "backend", "system_message", "memory", "append_system_prompt", "subtask"}, upstreamKeyNames(agentUpstream)...)

var orchestratorKeys = append([]string{
	// typed in Orchestrator
	"voting_sensitivity", "answer_novelty_requirement", "max_new_answers_per_agent", "timeout",
	"agent_turn_timeout_seconds", "coordination", "restart_policy", "independent_first_answer",
	"wait_for_first_answers", "max_cost_usd", "max_total_tokens",
	"max_consecutive_failures", "skip_coordination_rounds", "context_paths",
	"fairness_enabled", "fairness_lead_cap_answers", "voting_threshold",
	"max_midstream_injections_per_round", "defer_peer_updates_until_restart",
	"allow_midstream_peer_updates_before_checklist_submit",
	"checklist_require_gap_report", "gap_report_mode",
	// kept in Orchestrator.Extra
	"snapshot_storage", "agent_temporary_workspace", "dspy", "debug_final_answer", "session_storage",
	"max_new_answers_global",
	// massgen acts on these v0.1.73 keys
	"skip_final_presentation", "coordination_mode", "presenter_agent", "task_decomposer",
	// placeholders of upstream's examples (placeholderKeys)
	"type", "max_turns", "skills_directory",
}, upstreamKeyNames(orchestratorUpstream)...)

var coordinationKeys = append([]string{
	"compression_target_ratio",
	"enable_planning_mode", "planning_mode_instruction", "max_orchestration_restarts", "task_decomposer",
	"enable_agent_task_planning", "max_tasks_per_plan", "task_planning_filesystem_mode",
	"enable_memory_filesystem_mode", "use_skills", "massgen_skills", "skills_directory", "use_two_tier_workspace",
	"checklist_criteria_inline", "evaluation_criteria_generator", "checklist_criteria_preset", "improvements",
	"write_mode", "drift_conflict_policy", "enable_changedoc", "fast_iteration_mode",
	"learning_capture_mode", "disable_final_only_round_capture_fallback", "load_previous_session_skills",
	"enable_subagents", "subagent_default_timeout", "subagent_min_timeout", "subagent_max_timeout",
	"subagent_max_concurrent", "subagent_types", "subagent_orchestrator", "background_subagents",
}, upstreamKeyNames(coordinationUpstream)...)

var timeoutSettingsKeys = []string{
	"orchestrator_timeout_seconds", "agent_turn_timeout_seconds", "stream_idle_timeout_seconds",
	// massgen's own: how long the final presentation may run past the deadline
	"presentation_grace_seconds",
	// v0.1.73's per-round timeouts
	"initial_round_timeout_seconds", "subsequent_round_timeout_seconds", "round_timeout_grace_seconds",
}

var orchestratorTimeoutKeys = []string{"orchestrator_timeout_seconds"}

var uiKeys = append([]string{
	"display_type", "type", "logging_enabled", "use_orchestrator_for_single_agent",
	"automation_mode", "debug", "enable_final_presentation", "skip_agent_selector",
}, upstreamKeyNames(uiUpstream)...)

// keyHints catch mistakes edit distance cannot: a key that exists in other
// tools or older docs under a different name.
// The hint applies only at a level where its target is a known key.
var keyHints = map[string]string{
	"display":       "ui",
	"timeout":       "timeout_settings",
	"timeouts":      "timeout_settings",
	"orchestration": "orchestrator",
	"system_prompt": "system_message",
	"prompt":        "system_message",
}

// Backend keys with typed fields in Backend (or SimBackend for type sim).
var (
	backendCoreKeys = []string{"type", "model", "api_key", "base_url", "stream", "requests_per_minute", "tokens_per_minute", "workflow_actions"}
	simKeys         = []string{"scenario", "ttft_ms", "tokens_per_second"}
)

// backendOwnedKeys are massgen features, not provider parameters: upstream's
// base exclusion lists (backend/base.py, api_params_handler) plus the §4.3
// feature keys. They go to Backend.Extra and never into a provider request.
var backendOwnedKeys = []string{
	"cwd", "mcp_servers", "allowed_tools", "exclude_tools", "disallowed_tools", "custom_tools",
	"context_paths", "enable_web_search", "enable_code_execution", "enable_code_interpreter",
	"enable_mcp_command_line", "enforce_read_before_delete", "upload_files", "media_max_file_size_mb",
	"max_mcp_message_history", "permission_mode", "max_thinking_tokens", "api_version", "agent_config",
	"instance_id", "enable_rate_limit", "agent_temporary_workspace", "agent_temporary_workspace_parent",
	"_config_path", "context_write_access_enabled", "exclude_file_operation_mcps",
	"use_mcpwrapped_for_tool_filtering", "use_no_roots_wrapper", "enable_code_based_tools",
	"custom_tools_path", "auto_discover_custom_tools", "exclude_custom_tools", "direct_mcp_servers",
	"shared_tools_directory", "agent_id", "session_id", "enable_multimodal_tools", "multimodal_config",
	"image_generation_backend", "image_generation_model", "video_generation_backend",
	"video_generation_model", "audio_generation_backend", "audio_generation_model", "hooks",
	"debug_delay_seconds", "debug_delay_after_n_tools", "vote_only", "use_two_tier_workspace",
	// v0.1.73: provider features upstream's backends drive, and its own switches
	"websocket_mode", "enable_tool_search", "tool_search_variant", "enable_strict_tool_use",
	"enable_programmatic_flow", "concurrent_tool_execution", "max_concurrent_tools", "group_config",
	"enable_nlip", "nlip", "nlip_config",
	// members of the families isOwnedBackendKey also matches, listed for suggestions
	"command_line_execution_mode", "command_line_allowed_commands", "command_line_blocked_commands",
	"command_line_docker_image", "command_line_docker_memory_limit", "command_line_docker_cpu_limit",
	"command_line_docker_network_mode", "command_line_docker_enable_sudo", "command_line_docker_credentials",
	"command_line_docker_packages", "command_line_allow_unsandboxed", "command_line_allow_network",
	"command_line_max_processes", "workspace_max_size_mb",
	"enable_image_generation", "enable_audio_generation",
	"enable_video_generation", "enable_file_generation",
}

// isOwnedBackendKey also covers the key families upstream keeps growing
// (command_line_*, enable_*_generation) so a new member is not sent to a provider.
func isOwnedBackendKey(k string) bool {
	return slices.Contains(backendOwnedKeys, k) ||
		strings.HasPrefix(k, "command_line_") ||
		(strings.HasPrefix(k, "enable_") && strings.HasSuffix(k, "_generation"))
}

// backendBoolKeys must be booleans (upstream validates the first three;
// the rest are switches of the same kind).
func isBackendBoolKey(k string) bool {
	switch k {
	case "enable_web_search", "enable_code_execution", "enable_code_interpreter",
		"enable_mcp_command_line", "enforce_read_before_delete", "enable_rate_limit",
		"enable_multimodal_tools", "enable_code_based_tools", "command_line_docker_enable_sudo",
		"command_line_allow_unsandboxed", "command_line_allow_network",
		"websocket_mode", "enable_tool_search", "enable_strict_tool_use", "enable_programmatic_flow",
		"concurrent_tool_execution", "enable_nlip", "exclude_file_operation_mcps", "auto_discover_custom_tools":
		return true
	}
	return strings.HasPrefix(k, "enable_") && strings.HasSuffix(k, "_generation")
}

// backendStringListKeys must be lists of strings.
var backendStringListKeys = []string{
	"allowed_tools", "exclude_tools", "disallowed_tools",
	"command_line_allowed_commands", "command_line_blocked_commands", "direct_mcp_servers", "exclude_custom_tools",
}

// backendEnums are owned keys with a fixed set of values.
var backendEnums = map[string][]string{
	"permission_mode":                  {"default", "acceptEdits", "bypassPermissions", "plan"},
	"command_line_execution_mode":      {"local", "docker"},
	"command_line_docker_network_mode": {"none", "bridge", "host"},
}

// Valid values of the orchestrator and UI enums.
var (
	levelValues = []string{"lenient", "balanced", "strict"}
	// votingValues are v0.1.73's voting sensitivities; the ones past
	// levelValues load and vote by the level votingFallback gives them.
	votingValues = append(slices.Clone(levelValues), "roi", "roi_conservative", "roi_balanced", "roi_aggressive",
		"sequential", "adversarial", "consistency", "diversity", "reflective",
		"checklist", "checklist_scored", "checklist_gated")
	restartPolicyValues = []string{"restart", "inject"}
	permissionValues    = []string{"read", "write"}
	// Upstream v0.1.73's validator accepts textual_terminal (its default),
	// rich_terminal (deprecated: it runs the Textual display) and simple; its
	// runtime also takes terminal, silent, none and web, and --display takes
	// textual and rich. Every one loads (displayValue says how each maps).
	displayTypeValues = []string{"textual_terminal", "rich_terminal", "simple", "terminal", "silent", "none", "web", "textual", "rich"}
)

// votingFallback is the level an upstream voting sensitivity this version
// does not implement votes by: the one whose prompt asks the most alike.
var votingFallback = map[string]string{
	"roi_aggressive": "lenient",
	"roi":            "balanced", "roi_balanced": "balanced", "sequential": "balanced", "consistency": "balanced",
	"diversity": "balanced", "reflective": "balanced",
	"roi_conservative": "strict", "adversarial": "strict",
	"checklist": "strict", "checklist_scored": "strict", "checklist_gated": "strict",
}
