// Package geminicli runs Gemini CLI (npm @google/gemini-cli, program
// gemini; pinned 0.61.0) as a team member: backend type gemini_cli.
//
// Each task runs `gemini -m <model> --output-format stream-json
// --approval-mode <mode> --skip-trust` in the agent's workspace with the
// task's message on standard input (no argument-length limit; the CLI
// reads up to 8 MiB there). The vendor lays out under the CLI's private
// home (HOME):
//
//   - .gemini/settings.json: API-key auth (security.auth.selectedType
//     gemini-api-key: without it 0.61.0 ignores GOOGLE_GEMINI_BASE_URL),
//     or, without a key, the user's Google login (oauth-personal; its
//     .gemini/oauth_creds.json copied into the home by the app through
//     LoginFiles, its requests to Code Assist, CODE_ASSIST_ENDPOINT),
//     folder trust off (a CLI in an untrusted folder turns yolo back into
//     "default"), no usage statistics, no telemetry, no update checks, no
//     checkpointing, no IDE; the MCP servers: massgen's workflow tools
//     over streamable HTTP with their bearer header (the CLI calls them
//     mcp_massgen_new_answer and mcp_massgen_vote) and the agent's own;
//     model.maxSessionTurns from max_turns; general.maxAttempts 4 (the
//     CLI's own retries of a failing request, 10 by default; upstream
//     gives up after 4 quota errors);
//   - .gemini/GEMINI.md: the agent's instructions, as the CLI's global
//     context file. The CLI adds it to its own system prompt, as
//     upstream's .gemini/GEMINI.md is; GEMINI_SYSTEM_MD would replace the
//     CLI's prompt, and with it what the CLI tells its model about its
//     tools.
//
// The workspace does not configure the CLI, as far as 0.61.0 allows. It
// must trust the workspace to run headless, and a trusted folder's
// .gemini/settings.json, .env files and context files apply. The settings
// turn off hooks, the project's .env (advanced.ignoreLocalEnv) and every
// MCP server but the task's
// (mcp.allowed, which the workspace can only narrow; MCP is off when
// there is none). A workspace settings file that turns these back on
// wins: settings above the workspace's are system settings, which the
// CLI reads only from a root-owned path no one else can write. What such
// a file can start runs in the agent's sandbox, like the CLI's own shell
// tool. A GEMINI.md in the workspace is read as project context (0.61.0
// always adds GEMINI.md to context.fileName), as upstream's runs read it.
// The CLI also reads a trusted folder's .gemini/.env, but never
// over a variable that is set: the endpoint, the API version, the
// proxies, the Vertex and Code Assist switches and GEMINI_SYSTEM_MD are
// always set (empty when unused), so no file in the workspace can send
// the key or the requests elsewhere.
//
// The environment adds GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL (the
// endpoint's root, Google's by default: a trailing /v1 or /v1beta is
// dropped, the CLI's SDK adds v1beta), GEMINI_CLI_SYSTEM_SETTINGS_PATH and
// GEMINI_CLI_NO_RELAUNCH (the CLI would otherwise start itself a second
// time to raise its heap limit). With
// these settings the CLI connects to nothing but its endpoint (checked
// with strace; without them it also resolves Google's logging host).
//
// Approval: approval_mode (default yolo, as upstream) is passed as
// --approval-mode: yolo runs every tool call without asking; auto_edit and
// default leave calls that need approval to the CLI, which in its
// non-interactive mode refuses them rather than waiting; plan is
// read-only. The CLI's own sandbox (-s) is not used: massgen runs it in
// the agent's (cli.Agent.Wrap). Running as root is allowed by 0.61.0.
//
// Sessions: every task starts a new session. massgen's prompts are whole
// (the question, the answers so far, the rules), as the API agents' turns
// are, and a resumed session would add the previous turn's tool output to
// each request. The session id is still reported (Result.Session).
//
// Output: assistant message deltas become Text; tool_use/tool_result
// pairs of the CLI's own tools become ToolUsed (the workflow tools are
// reported by the workflow server instead); the result event's stats give
// the task's usage and one ModelCall per model the CLI used (Gemini CLI
// reports tokens per model, not per response); an error result becomes
// the task's error, an *llm.Error with the provider's HTTP status when
// the CLI quotes the API's error. The CLI streams no reasoning in this
// mode, and states no cost.
package geminicli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
)

// Type is the backend type.
const Type = "gemini_cli"

// DefaultModel is upstream's default (backend/gemini_cli.py).
const DefaultModel = "gemini-3.1-pro-preview"

// approvalModes are Gemini CLI 0.61.0's --approval-mode choices.
var approvalModes = []string{"yolo", "auto_edit", "default", "plan"}

// DefaultBaseURL is the Gemini API's endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// pinned are variables set empty in the CLI's environment: the CLI reads
// a trusted workspace's .gemini/.env whatever its settings say, but never
// over a variable that is set, and these would send the key or the
// requests elsewhere (a proxy, Vertex, Code Assist) or replace the system
// prompt.
var pinned = []string{"GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_ACCESS_TOKEN",
	"GOOGLE_VERTEX_BASE_URL", "CODE_ASSIST_ENDPOINT", "GEMINI_SYSTEM_MD", "GEMINI_CLI_CUSTOM_HEADERS",
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NODE_OPTIONS"}

// InstructionsFile is the context file the agent's instructions are
// written to, in the CLI's home (<home>/.gemini): its global context file.
const InstructionsFile = "GEMINI.md"

// maxAttempts bounds the CLI's own retries of one request.
const maxAttempts = 4

func init() { cli.Register(Vendor{}) }

// Vendor is Gemini CLI's cli.Vendor (and cli.Checker).
type Vendor struct{}

func (Vendor) Type() string                          { return Type }
func (Vendor) Program() string                       { return "gemini" }
func (Vendor) Decoder() cli.Decoder                  { return &decoder{tools: map[string]toolUse{}} }
func (Vendor) Check(options map[string]any) []string { return check(options) }

// Prepare writes the CLI's settings and context file under inv.Home and
// returns its command line.
func (Vendor) Prepare(inv *cli.Invocation) (cli.Command, error) {
	mode, model, turns, err := options(inv.Options)
	if err != nil {
		return cli.Command{}, err
	}
	model = cmp.Or(inv.Model, model, DefaultModel)
	dir := filepath.Join(inv.Home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cli.Command{}, err
	}
	settings, err := json.MarshalIndent(Settings(inv, turns), "", "  ")
	if err != nil {
		return cli.Command{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o600); err != nil {
		return cli.Command{}, err
	}
	// The home is kept between tasks: a task without instructions must
	// not read the previous task's.
	memory := filepath.Join(dir, InstructionsFile)
	if strings.TrimSpace(inv.System) == "" {
		if err := os.Remove(memory); err != nil && !errors.Is(err, os.ErrNotExist) {
			return cli.Command{}, err
		}
	} else if err := os.WriteFile(memory, []byte(inv.System), 0o600); err != nil {
		return cli.Command{}, err
	}
	env := []string{"GEMINI_CLI_NO_RELAUNCH=true", "GOOGLE_GEMINI_BASE_URL=" + rootURL(cmp.Or(inv.BaseURL, DefaultBaseURL)), "GOOGLE_GENAI_API_VERSION=v1beta"}
	if inv.APIKey != "" {
		env = append(env, "GEMINI_API_KEY="+inv.APIKey)
	}
	for _, k := range pinned {
		if k == "CODE_ASSIST_ENDPOINT" && inv.APIKey == "" {
			// A login's requests go to Code Assist (the task's base
			// URL, when set, stands for it): the CLI would take an
			// empty variable for the endpoint itself.
			env = append(env, k+"="+rootURL(cmp.Or(inv.BaseURL, CodeAssistEndpoint)))
			continue
		}
		env = append(env, k+"=")
	}
	args := []string{"-m", model, "--output-format", "stream-json", "--approval-mode", mode, "--skip-trust"}
	return cli.Command{Args: args, Env: env, Stdin: inv.Prompt}, nil
}

// ownTools are Gemini CLI's own tools (0.61.0), excluded past the round's
// hard time limit.
var ownTools = []string{"update_topic", "list_directory", "read_file", "read_many_files", "grep_search", "glob", "replace",
	"write_file", "web_fetch", "run_shell_command", "list_background_processes", "read_background_output", "google_web_search",
	"enter_plan_mode", "exit_plan_mode", "invoke_agent", "activate_skill", "save_memory", "write_todos"}

// Settings is the settings.json of one task.
func Settings(inv *cli.Invocation, maxTurns int) map[string]any {
	s := map[string]any{
		"security": map[string]any{
			"folderTrust": map[string]any{"enabled": false},
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false, "logPrompts": false},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
			"checkpointing":                map[string]any{"enabled": false},
			"maxAttempts":                  maxAttempts,
		},
		"ide": map[string]any{"enabled": false},
		// The workspace does not configure the CLI: no .env file, no
		// hooks, no MCP server but the task's (see the package doc).
		"advanced":    map[string]any{"ignoreLocalEnv": true},
		"hooksConfig": map[string]any{"enabled": false},
	}
	// With a key, API-key auth; without one, the user's Google login
	// (LoginFiles), which the app copied into the home.
	auth := "gemini-api-key"
	if inv.APIKey == "" {
		auth = "oauth-personal"
	}
	s["security"].(map[string]any)["auth"] = map[string]any{"selectedType": auth}
	if maxTurns > 0 {
		s["model"] = map[string]any{"maxSessionTurns": maxTurns}
	}
	if inv.WorkflowOnly {
		// Past the round's hard time limit: none of the CLI's own tools,
		// only the workflow server's. (An empty tools.core would take the
		// MCP tools away too.)
		s["tools"] = map[string]any{"exclude": ownTools}
	}
	servers := map[string]any{}
	all := slices.Clone(inv.MCPServers)
	if inv.Workflow != nil {
		all = append(all, *inv.Workflow)
	}
	var names []string
	for _, m := range all {
		servers[m.Name] = mcpServer(m)
		names = append(names, m.Name)
	}
	if len(servers) > 0 {
		s["mcpServers"] = servers
		s["mcp"] = map[string]any{"allowed": names}
	} else {
		s["admin"] = map[string]any{"mcp": map[string]any{"enabled": false}}
	}
	return s
}

// mcpServer is one entry of settings.json's mcpServers. The CLI runs
// their tools without asking (trust), as its yolo mode does its own.
func mcpServer(m cli.MCPServer) map[string]any {
	out := map[string]any{"trust": true}
	if m.URL != "" {
		out["httpUrl"] = m.URL
		if len(m.Headers) > 0 {
			out["headers"] = m.Headers
		}
		return out
	}
	out["command"] = m.Command
	if len(m.Args) > 0 {
		out["args"] = m.Args
	}
	if len(m.Env) > 0 {
		out["env"] = m.Env
	}
	return out
}

// rootURL is a Gemini endpoint without its API version: the CLI's SDK
// adds /v1beta itself.
func rootURL(u string) string {
	u = strings.TrimRight(u, "/")
	for _, v := range []string{"/v1beta", "/v1"} {
		if r, ok := strings.CutSuffix(u, v); ok {
			return r
		}
	}
	return u
}

// options reads the backend keys the vendor takes.
func options(o map[string]any) (mode, model string, maxTurns int, err error) {
	mode = "yolo"
	if v, ok := o["approval_mode"]; ok && v != nil {
		s, _ := v.(string)
		if !slices.Contains(approvalModes, s) {
			return "", "", 0, fmt.Errorf("approval_mode %v: Gemini CLI takes one of %s", v, strings.Join(approvalModes, ", "))
		}
		mode = s
	}
	model, _ = o["model"].(string)
	switch n := o["max_turns"].(type) {
	case int:
		maxTurns = n
	case int64:
		maxTurns = int(n)
	case float64:
		maxTurns = int(n)
	}
	return mode, model, maxTurns, nil
}

// taken are the keys the vendor maps; handled are massgen's own, which
// the run handles for every backend (the workspace, its tools).
var (
	taken   = []string{"approval_mode", "model", "max_turns"}
	handled = []string{"cwd", "context_paths", "workspace_max_size_mb", "enable_mcp_command_line", "mcp_servers", "custom_tools", "system_message"}
)

// check names the keys Gemini CLI has no equivalent for.
func check(o map[string]any) []string {
	var warnings []string
	if _, _, _, err := options(o); err != nil {
		warnings = append(warnings, err.Error()+": its tasks will fail")
	}
	warnings = append(warnings, cli.Unused(o, "Gemini CLI", taken, handled)...)
	return warnings
}
