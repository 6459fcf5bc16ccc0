package claudecode

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// options are the claude_code block's keys Claude Code has an equivalent
// for (see the package doc).
type options struct {
	permissionMode      string
	allowed, disallowed []string
	maxTurns            int
	systemPrompt        string
	appendSystemPrompt  string
	useDefaultPrompt    bool
	effort              string
	thinkingBudget      int
	thinkingOff         bool
	webSearch           bool
	maxBudgetUSD        float64
	fallbackModel       string
	env                 map[string]string
}

// permissionModes are Claude Code's (and the SDK's) modes.
var permissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto", "manual"}

// efforts are --effort's levels.
var efforts = []string{"low", "medium", "high", "xhigh", "max"}

// massgenKeys are backend keys massgen itself acts on, whatever the
// backend (internal/config's backendOwnedKeys, less those a Claude Code
// block hands to its vendor): the config has judged them, and the app
// passes them along with the CLI's own, so Check stays quiet about them.
var massgenKeys = []string{
	"type", "model", "api_key", "base_url", "cwd", "mcp_servers", "custom_tools", "context_paths",
	"enable_code_execution", "enable_code_interpreter", "enable_mcp_command_line", "enforce_read_before_delete",
	"upload_files", "media_max_file_size_mb", "max_mcp_message_history", "api_version", "agent_config", "instance_id",
	"enable_rate_limit", "agent_temporary_workspace", "agent_temporary_workspace_parent", "_config_path",
	"context_write_access_enabled", "exclude_file_operation_mcps", "use_mcpwrapped_for_tool_filtering",
	"use_no_roots_wrapper", "enable_code_based_tools", "custom_tools_path", "auto_discover_custom_tools",
	"exclude_custom_tools", "direct_mcp_servers", "shared_tools_directory", "agent_id", "session_id",
	"enable_multimodal_tools", "multimodal_config", "image_generation_backend", "image_generation_model",
	"video_generation_backend", "video_generation_model", "audio_generation_backend", "audio_generation_model",
	"hooks", "debug_delay_seconds", "debug_delay_after_n_tools", "vote_only", "use_two_tier_workspace",
	"websocket_mode", "enable_tool_search", "tool_search_variant", "enable_strict_tool_use", "enable_programmatic_flow",
	"concurrent_tool_execution", "max_concurrent_tools", "group_config", "enable_nlip", "nlip", "nlip_config",
	"workspace_max_size_mb", "system_message",
}

func massgenKey(k string) bool {
	return slices.Contains(massgenKeys, k) || strings.HasPrefix(k, "command_line_") ||
		(strings.HasPrefix(k, "enable_") && strings.HasSuffix(k, "_generation"))
}

// parseOptions reads the keys it knows; each other key, and each value of
// the wrong kind, is a warning.
func parseOptions(m map[string]any) (options, []string) {
	var o options
	var warn []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if v == nil {
			continue
		}
		switch k {
		case "permission_mode":
			s, ok := v.(string)
			if !ok || !slices.Contains(permissionModes, s) {
				warn = append(warn, errValue(k, v, "one of "+strings.Join(permissionModes, ", ")))
				continue
			}
			o.permissionMode = s
		case "allowed_tools":
			l, ok := stringList(v)
			if !ok {
				warn = append(warn, errValue(k, v, "a list of tool names"))
			}
			o.allowed = l
		case "disallowed_tools", "exclude_tools":
			// exclude_tools, massgen's filter of an agent's tools, takes
			// Claude Code's tools away the same way.
			l, ok := stringList(v)
			if !ok {
				warn = append(warn, errValue(k, v, "a list of tool names"))
			}
			o.disallowed = append(o.disallowed, l...)
		case "add_dirs":
			warn = append(warn, "claude_code: add_dirs is ignored: massgen's sandbox decides what the CLI may read and write (use context_paths)")
		case "max_turns":
			n, ok := whole(v)
			if !ok || n < 1 {
				warn = append(warn, errValue(k, v, "a whole number of at least 1"))
				continue
			}
			o.maxTurns = n
		case "system_prompt", "append_system_prompt", "fallback_model":
			s, ok := v.(string)
			if !ok {
				warn = append(warn, errValue(k, v, "text"))
				continue
			}
			switch k {
			case "system_prompt":
				o.systemPrompt = s
			case "append_system_prompt":
				o.appendSystemPrompt = s
			default:
				o.fallbackModel = s
			}
		case "use_default_prompt", "enable_web_search":
			b, ok := v.(bool)
			if !ok {
				warn = append(warn, errValue(k, v, "true or false"))
				continue
			}
			if k == "use_default_prompt" {
				o.useDefaultPrompt = b
			} else {
				o.webSearch = b
			}
		case "reasoning", "thinking":
			r, ok := v.(map[string]any)
			if !ok {
				warn = append(warn, errValue(k, v, "a map (effort, budget_tokens, type)"))
				continue
			}
			warn = append(warn, o.reasoning(k, r)...)
		case "max_thinking_tokens":
			warn = append(warn, o.budget(k, v)...)
		case "max_budget_usd":
			f, ok := number(v)
			if !ok || f <= 0 {
				warn = append(warn, errValue(k, v, "a positive amount"))
				continue
			}
			o.maxBudgetUSD = f
		case "env":
			e, ok := v.(map[string]any)
			if !ok {
				warn = append(warn, errValue(k, v, "a map of variables"))
				continue
			}
			o.env = map[string]string{}
			for name, val := range e {
				if reserved(name) {
					warn = append(warn, fmt.Sprintf("claude_code: env: %s is set by massgen; ignored", name))
					continue
				}
				o.env[name] = fmt.Sprint(val)
			}
		default:
			if !massgenKey(k) {
				warn = append(warn, fmt.Sprintf("claude_code: %s has no Claude Code equivalent; ignored", k))
			}
		}
	}
	return o, warn
}

// reasoning reads reasoning: {effort, budget_tokens, type} (and the same
// under thinking:).
func (o *options) reasoning(key string, r map[string]any) []string {
	var warn []string
	for _, k := range sortedKeys(r) {
		v := r[k]
		switch k {
		case "effort":
			s, _ := v.(string)
			if s == "minimal" || s == "none" {
				s = "low"
			}
			if !slices.Contains(efforts, s) {
				warn = append(warn, errValue(key+".effort", v, "one of "+strings.Join(efforts, ", ")))
				continue
			}
			o.effort = s
		case "budget_tokens", "max_tokens":
			warn = append(warn, o.budget(key+"."+k, v)...)
		case "type", "enabled":
			switch v {
			case "disabled", false:
				o.thinkingOff = true
			case "enabled", "adaptive", true:
			default:
				warn = append(warn, errValue(key+"."+k, v, "enabled, adaptive or disabled"))
			}
		case "summary", "display":
			// how reasoning is shown: Claude Code streams its thinking as it is
		default:
			warn = append(warn, fmt.Sprintf("claude_code: %s.%s has no Claude Code equivalent; ignored", key, k))
		}
	}
	return warn
}

// budget reads a thinking budget in tokens (0: thinking off).
func (o *options) budget(key string, v any) []string {
	n, ok := whole(v)
	if !ok || n < 0 {
		return []string{errValue(key, v, "a whole number of tokens")}
	}
	if n == 0 {
		o.thinkingOff = true
	}
	o.thinkingBudget = n
	return nil
}

// systemPrompt composes the system prompt from massgen's instructions and
// the block's keys; appendOnly: keep Claude Code's own prompt and add this
// to it.
func (o *options) prompt(massgen string) (text string, appendOnly bool) {
	var parts []string
	for _, p := range []string{o.systemPrompt, massgen, o.appendSystemPrompt} {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n\n"), o.useDefaultPrompt && o.systemPrompt == ""
}

func stringList(v any) ([]string, bool) {
	switch l := v.(type) {
	case string: // "Read, Write" as the CLI's flag takes it
		var out []string
		for _, s := range strings.FieldsFunc(l, func(r rune) bool { return r == ',' }) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, true
	case []string:
		return l, true
	case []any:
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return out, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func whole(v any) (int, bool) {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
