package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
)

func init() { cli.Register(Vendor{}) }

// Vendor is the Codex CLI (backend type codex, program codex).
type Vendor struct{}

// Type is the backend type.
const Type = "codex"

// Type is the backend type.
func (Vendor) Type() string { return Type }

// Program is the executable's name.
func (Vendor) Program() string { return "codex" }

// Decoder reads one task's `codex exec --json` events.
func (Vendor) Decoder() cli.Decoder { return &decoder{} }

// ProviderID is the model provider massgen defines in Codex's config when
// it is given an endpoint or a key; KeyVar is the variable that carries the
// key (env_key).
const (
	ProviderID = "massgen"
	KeyVar     = "OPENAI_API_KEY"
)

// tokenVar is the variable that carries the n-th MCP header value; Codex's
// shell tool does not pass variables whose names contain TOKEN (its default
// excludes) nor those listed in shell_environment_policy.exclude.
func tokenVar(n int) string { return "MASSGEN_MCP_TOKEN_" + strconv.Itoa(n) }

// approvalModes are upstream's approval_mode values, each with the flags
// it means when massgen does not sandbox the CLI.
var approvalModes = map[string][]string{
	"full-auto":            {"--sandbox", "workspace-write"},
	"auto-edit":            {"--sandbox", "workspace-write"},
	"full-access":          {"--sandbox", "danger-full-access"},
	"dangerous-no-sandbox": {"--dangerously-bypass-approvals-and-sandbox"},
}

// efforts are the values of model_reasoning_effort Codex knows.
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// summaries are the values of model_reasoning_summary.
var summaries = []string{"auto", "concise", "detailed", "none"}

// DefaultEffort is upstream's reasoning effort when the config names none.
const DefaultEffort = "high"

// Prepare writes $CODEX_HOME (Home/.codex): config.toml and the system
// prompt; the prompt goes on standard input.
func (Vendor) Prepare(inv *cli.Invocation) (cli.Command, error) {
	home := filepath.Join(inv.Home, ".codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return cli.Command{}, err
	}
	env := []string{"CODEX_HOME=" + home}
	var t toml

	// Root keys first: TOML puts every key after a table header in it.
	if inv.Model != "" {
		t.set("model", inv.Model)
	}
	custom := inv.BaseURL != "" || inv.APIKey != ""
	if custom {
		t.set("model_provider", ProviderID)
	}
	if inv.APIKey != "" {
		env = append(env, KeyVar+"="+inv.APIKey)
	}
	effort, summary := reasoning(inv.Options)
	t.set("model_reasoning_effort", effort)
	if summary != "" {
		t.set("model_reasoning_summary", summary)
	}
	if inv.System != "" {
		path := filepath.Join(home, "instructions.md")
		if err := os.WriteFile(path, []byte(inv.System), 0o600); err != nil {
			return cli.Command{}, err
		}
		t.set("model_instructions_file", path)
	}
	if on, ok := inv.Options["enable_web_search"].(bool); ok {
		t.set("web_search", map[bool]string{true: "live", false: "disabled"}[on])
	}
	// The workspace does not configure the CLI: no AGENTS.md from it (one
	// the agent wrote for its next turn, or found). A project
	// .codex/config.toml is read only in a trusted project, which a
	// workspace never is.
	t.set("project_doc_max_bytes", 0)
	// A non-interactive run that never waits for an approval.
	t.set("approval_policy", "never")
	// Nothing to the network besides the provider: no update check, and
	// no startup sync of the curated plugins (GitHub, chatgpt.com).
	t.set("check_for_update_on_startup", false)
	// A login, if the home holds one, stays in its auth.json: no keyring
	// (there is none in the sandbox).
	t.set("cli_auth_credentials_store", "file")

	if custom {
		base := inv.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		t.table("model_providers", ProviderID)
		t.set("name", ProviderID)
		t.set("base_url", strings.TrimRight(base, "/"))
		if inv.APIKey != "" {
			t.set("env_key", KeyVar)
		} else {
			// No key: the user's login in auth.json (LoginFiles).
			t.set("requires_openai_auth", true)
		}
		t.set("wire_api", "responses")
	}
	t.table("analytics")
	t.set("enabled", false)
	t.table("feedback")
	t.set("enabled", false)
	t.table("otel")
	t.set("exporter", "none")
	t.set("log_user_prompt", false)
	t.table("history")
	t.set("persistence", "none")
	t.table("features")
	t.set("plugins", false)
	// No ChatGPT apps (connectors): on a ChatGPT login Codex would add
	// their MCP server (chatgpt.com/backend-api/ps/mcp), the user's
	// connected accounts with it, and wait about 20 s for it where the
	// network does not reach it.
	t.set("apps", false)
	t.table("shell_environment_policy")
	t.set("exclude", []string{"MASSGEN_*", KeyVar})
	// Codex's own sandbox, when massgen's is not there (workspace-write):
	// the workspace, its TMPDIR (the home's tmp) and the network, as
	// upstream gives it, but not /tmp, which massgen's sandbox does not
	// share either.
	t.table("sandbox_workspace_write")
	t.set("network_access", true)
	t.set("exclude_slash_tmp", true)

	servers := inv.MCPServers
	if inv.Workflow != nil {
		servers = append([]cli.MCPServer{*inv.Workflow}, servers...)
	}
	n := 0
	for _, s := range servers {
		t.table("mcp_servers", s.Name)
		if s.URL != "" {
			t.set("url", s.URL)
			if len(s.Headers) > 0 {
				vars := make(map[string]string, len(s.Headers))
				for _, h := range sortedKeys(s.Headers) {
					v := tokenVar(n)
					n++
					vars[h] = v
					env = append(env, v+"="+s.Headers[h])
				}
				t.set("env_http_headers", vars)
			}
		} else {
			t.set("command", s.Command)
			if len(s.Args) > 0 {
				t.set("args", s.Args)
			}
			if len(s.Env) > 0 {
				t.set("env", s.Env)
			}
		}
		if on := filterOf(inv.Options["allowed_tools"], s.Name); len(on) > 0 {
			t.set("enabled_tools", on)
		}
		if off := filterOf(inv.Options["exclude_tools"], s.Name); len(off) > 0 {
			t.set("disabled_tools", off)
		}
		// massgen's sandbox, not an approval, bounds what a tool does:
		// a call that waited for one would fail under approval "never".
		t.set("default_tools_approval_mode", "approve")
		if inv.Workflow != nil && s.Name == inv.Workflow.Name {
			// Without the workflow tools the turn cannot end: fail at
			// once. A call waits for the coordinator's verdict, which
			// only the turn's own deadline bounds.
			t.set("required", true)
			t.set("tool_timeout_sec", 86400)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(t.String()), 0o600); err != nil {
		return cli.Command{}, err
	}

	// Not --ephemeral: the session file is where each response's usage is
	// (rollout.go).
	args := []string{"exec", "--json", "--skip-git-repo-check", "--color", "never", "-C", inv.Workdir}
	if inv.Sandboxed {
		// massgen's sandbox is the enforcement; Codex's own (Landlock,
		// seccomp, its bubblewrap) cannot nest inside it.
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	} else {
		mode, _ := inv.Options["approval_mode"].(string)
		flags, ok := approvalModes[mode]
		if !ok {
			flags = approvalModes["full-auto"]
		}
		args = append(args, flags...)
	}
	// "-": the prompt is read from standard input, whatever its length
	// (one argument may not exceed 128 KiB on Linux).
	args = append(args, "-")
	return cli.Command{Args: args, Env: env, Stdin: inv.Prompt, Decoder: &decoder{roll: &rollout{home: home}}}, nil
}

// reasoning reads model_reasoning_effort (or reasoning.effort, upstream's
// other spelling) and reasoning.summary (or model_reasoning_summary).
func reasoning(opts map[string]any) (effort, summary string) {
	r, _ := opts["reasoning"].(map[string]any)
	effort, _ = opts["model_reasoning_effort"].(string)
	if effort == "" {
		effort, _ = r["effort"].(string)
	}
	if !slices.Contains(efforts, effort) {
		effort = DefaultEffort
	}
	summary, _ = opts["model_reasoning_summary"].(string)
	if summary == "" {
		summary, _ = r["summary"].(string)
	}
	if !slices.Contains(summaries, summary) {
		summary = ""
	}
	return effort, summary
}

// Check names the backend keys Codex has no equivalent for, and values it
// does not know.
func (Vendor) Check(opts map[string]any) []string {
	var warns []string
	for _, k := range sortedKeys(opts) {
		v := opts[k]
		switch k {
		case "approval_mode":
			if s, _ := v.(string); approvalModes[s] == nil {
				warns = append(warns, fmt.Sprintf("codex: approval_mode %v is not one of full-auto, auto-edit, full-access, dangerous-no-sandbox; full-auto applies", v))
			}
		case "model_reasoning_effort":
			if s, _ := v.(string); !slices.Contains(efforts, s) {
				warns = append(warns, fmt.Sprintf("codex: model_reasoning_effort %v is not one of %s; %s applies", v, strings.Join(efforts, ", "), DefaultEffort))
			}
		case "model_reasoning_summary":
			if s, _ := v.(string); !slices.Contains(summaries, s) {
				warns = append(warns, fmt.Sprintf("codex: model_reasoning_summary %v is not one of %s; ignored", v, strings.Join(summaries, ", ")))
			}
		case "reasoning":
			r, ok := v.(map[string]any)
			if !ok {
				warns = append(warns, "codex: reasoning must be a map (effort, summary); ignored")
				continue
			}
			for _, rk := range sortedKeys(r) {
				switch rk {
				case "effort":
					if s, _ := r[rk].(string); !slices.Contains(efforts, s) {
						warns = append(warns, fmt.Sprintf("codex: reasoning.effort %v is not one of %s; %s applies", r[rk], strings.Join(efforts, ", "), DefaultEffort))
					}
				case "summary":
					if s, _ := r[rk].(string); !slices.Contains(summaries, s) {
						warns = append(warns, fmt.Sprintf("codex: reasoning.summary %v is not one of %s; ignored", r[rk], strings.Join(summaries, ", ")))
					}
				default:
					warns = append(warns, fmt.Sprintf("codex: reasoning.%s has no equivalent in the Codex CLI; ignored", rk))
				}
			}
		case "enable_web_search":
			if _, ok := v.(bool); !ok {
				warns = append(warns, "codex: enable_web_search must be true or false; Codex's default applies")
			}
		case "allowed_tools", "exclude_tools":
			for _, name := range stringsOf(v) {
				if _, _, ok := mcpTool(name); !ok {
					warns = append(warns, fmt.Sprintf("codex: %s names %s, not a tool of an MCP server (mcp__server__tool); "+
						"Codex's own tools cannot be filtered, so it is ignored", k, name))
				}
			}
		case "add_dirs":
			warns = append(warns, "codex: add_dirs is ignored: massgen's sandbox decides what the CLI may write (use context_paths)")
		default:
			if massgenKey(k) {
				continue // massgen's own: the config judged it
			}
			warns = append(warns, fmt.Sprintf("codex: %s has no equivalent in the Codex CLI; ignored", k))
		}
	}
	return warns
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// massgenKeys are backend keys massgen itself acts on, whatever the
// backend (internal/config's backendOwnedKeys, less the CLI settings a
// vendor judges: permission_mode, disallowed_tools, max_thinking_tokens):
// the config has judged them, so a vendor stays quiet about them.
var massgenKeys = []string{
	"cwd", "mcp_servers", "custom_tools", "context_paths", "enable_code_execution", "enable_code_interpreter",
	"enable_mcp_command_line", "enforce_read_before_delete", "upload_files", "media_max_file_size_mb",
	"max_mcp_message_history", "api_version", "agent_config", "instance_id", "enable_rate_limit",
	"agent_temporary_workspace", "agent_temporary_workspace_parent", "_config_path", "context_write_access_enabled",
	"exclude_file_operation_mcps", "use_mcpwrapped_for_tool_filtering", "use_no_roots_wrapper", "enable_code_based_tools",
	"custom_tools_path", "auto_discover_custom_tools", "exclude_custom_tools", "direct_mcp_servers",
	"shared_tools_directory", "agent_id", "session_id", "enable_multimodal_tools", "multimodal_config",
	"image_generation_backend", "image_generation_model", "video_generation_backend", "video_generation_model",
	"audio_generation_backend", "audio_generation_model", "hooks", "debug_delay_seconds", "debug_delay_after_n_tools",
	"vote_only", "use_two_tier_workspace", "websocket_mode", "enable_tool_search", "tool_search_variant",
	"enable_strict_tool_use", "enable_programmatic_flow", "concurrent_tool_execution", "max_concurrent_tools",
	"group_config", "enable_nlip", "nlip", "nlip_config", "workspace_max_size_mb", "system_message",
}

func massgenKey(k string) bool {
	return slices.Contains(massgenKeys, k) || strings.HasPrefix(k, "command_line_") ||
		(strings.HasPrefix(k, "enable_") && strings.HasSuffix(k, "_generation"))
}

// mcpTool splits an MCP tool's name as massgen's config writes it
// (mcp__server__tool).
func mcpTool(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// stringsOf is a list of strings from the config ([]string or []any).
func stringsOf(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// filterOf is the tools of server a tool list (allowed_tools,
// exclude_tools) names.
func filterOf(list any, server string) []string {
	var out []string
	for _, name := range stringsOf(list) {
		if s, tool, ok := mcpTool(name); ok && s == server {
			out = append(out, tool)
		}
	}
	return out
}
