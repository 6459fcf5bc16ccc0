package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/agent/cli"
)

// Type is the backend type; Program the CLI's executable.
const (
	Type    = "claude_code"
	Program = "claude"
)

// Vendor is Claude Code for internal/agent/cli.
type Vendor struct{}

func init() { cli.Register(Vendor{}) }

// Type implements cli.Vendor.
func (Vendor) Type() string { return Type }

// Program implements cli.Vendor.
func (Vendor) Program() string { return Program }

// Decoder implements cli.Vendor.
func (Vendor) Decoder() cli.Decoder { return newDecoder() }

// alwaysDisallowed are the tools upstream never lets Claude Code use: file
// removal and privilege changes by shell, subagents and task lists (a
// team member works alone, in one task), plan-mode exits, skills, and the
// IDE's tools (there is no IDE).
var alwaysDisallowed = []string{"Bash(rm*)", "Bash(sudo*)", "Bash(su*)", "Bash(chmod*)", "Bash(chown*)",
	"Task", "TodoWrite", "ExitPlanMode", "Skill", "mcp__ide__getDiagnostics", "mcp__ide__executeCode"}

// planDenied are the tools that change files or run commands: what
// permission_mode: plan leaves out.
var planDenied = []string{"Edit", "Write", "NotebookEdit", "Bash"}

// webTools reach the network themselves: only with enable_web_search.
var webTools = []string{"WebSearch", "WebFetch"}

// workflowTimeout is the workflow server's tool-call timeout in Claude
// Code's MCP configuration: longer than any turn, whatever Claude Code's
// default.
const workflowTimeout = 24 * time.Hour

// dir is where a task's files go in the CLI's home.
const dir = ".massgen"

// Prepare implements cli.Vendor: it writes the MCP configuration and the
// system prompt under inv.Home and returns the command line.
func (Vendor) Prepare(inv *cli.Invocation) (cli.Command, error) {
	o, _ := parseOptions(inv.Options)
	d := filepath.Join(inv.Home, dir)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return cli.Command{}, err
	}
	mcpFile := filepath.Join(d, "mcp.json")
	if err := writePrivate(mcpFile, mcpConfig(inv)); err != nil {
		return cli.Command{}, err
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--no-session-persistence", "--setting-sources", "",
		// Nothing may ever wait for an approval: what would prompt is denied.
		"--permission-prompts", "none", "--strict-mcp-config", "--mcp-config", mcpFile}

	system, appendOnly := o.prompt(inv.System)
	if system != "" {
		sysFile := filepath.Join(d, "system.md")
		if err := writePrivate(sysFile, []byte(system)); err != nil {
			return cli.Command{}, err
		}
		if appendOnly {
			args = append(args, "--append-system-prompt-file", sysFile)
		} else {
			args = append(args, "--system-prompt-file", sysFile)
		}
	}

	// The sandbox enforces: Claude Code never asks. Its plan mode would
	// deny the workflow tools too (it denies every MCP tool), so plan is
	// bypassPermissions without the tools that change files.
	args = append(args, "--permission-mode", "bypassPermissions")
	allowed := append([]string{"mcp__" + cli.WorkflowServer}, o.allowed...)
	args = append(args, "--allowedTools", strings.Join(allowed, ","))
	denied := append([]string{}, alwaysDisallowed...)
	if !o.webSearch {
		denied = append(denied, webTools...)
	}
	if o.permissionMode == "plan" {
		denied = append(denied, planDenied...)
	}
	denied = append(denied, o.disallowed...)
	args = append(args, "--disallowedTools", strings.Join(denied, ","))
	if inv.WorkflowOnly {
		// Past the round's hard time limit: none of Claude Code's own
		// tools, only the workflow server's.
		args = append(args, "--tools", "")
	}

	if inv.Model != "" {
		args = append(args, "--model", inv.Model)
	}
	if o.maxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(o.maxTurns))
	}
	if o.effort != "" {
		args = append(args, "--effort", o.effort)
	}
	if o.thinkingOff {
		args = append(args, "--thinking", "disabled")
	}
	if o.maxBudgetUSD > 0 {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(o.maxBudgetUSD, 'f', -1, 64))
	}
	if o.fallbackModel != "" {
		args = append(args, "--fallback-model", o.fallbackModel)
	}

	// The user's env first: what follows wins (later entries of an
	// environment take precedence for exec, and ours are set last).
	var env []string
	for _, k := range sortedKeys(o.env) {
		if !reserved(k) {
			env = append(env, k+"="+o.env[k])
		}
	}
	env = append(env,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_UPDATES=1", "DISABLE_BUG_COMMAND=1",
		"IS_SANDBOX=1", "CLAUDE_CODE_MAX_RETRIES=2",
		// Every tool in every request: with tool search on, Claude Code
		// offers MCP tools only once the model has searched for them, and
		// a turn must be able to end by calling new_answer or vote.
		"ENABLE_TOOL_SEARCH=false")
	if inv.APIKey != "" {
		env = append(env, "ANTHROPIC_API_KEY="+inv.APIKey)
	}
	if inv.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(strings.TrimSuffix(inv.BaseURL, "/"), "/v1"))
	}
	if o.thinkingBudget > 0 {
		env = append(env, "MAX_THINKING_TOKENS="+strconv.Itoa(o.thinkingBudget))
	}
	return cli.Command{Args: args, Env: env, Stdin: inv.Prompt}, nil
}

// reserved are the variables the vendor sets itself, which a backend's env
// may not change: the endpoint and key, the network switches, the sandbox
// flag, and what the frame sets (the home, the path).
func reserved(k string) bool {
	switch k {
	case "HOME", "PATH", "TMPDIR", "IS_SANDBOX", "MAX_THINKING_TOKENS", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CONFIG_DIR",
		"ENABLE_TOOL_SEARCH":
		return true
	}
	return strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "DISABLE_") ||
		k == "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
}

// mcpConfig is the --mcp-config file: the workflow server first, then the
// agent's own.
func mcpConfig(inv *cli.Invocation) []byte {
	servers := map[string]any{}
	add := func(s cli.MCPServer) {
		if s.URL != "" {
			e := map[string]any{"type": "http", "url": s.URL}
			if len(s.Headers) > 0 {
				e["headers"] = s.Headers
			}
			servers[s.Name] = e
			return
		}
		e := map[string]any{"type": "stdio", "command": s.Command, "args": nonNil(s.Args)}
		if len(s.Env) > 0 {
			e["env"] = s.Env
		}
		servers[s.Name] = e
	}
	for _, s := range inv.MCPServers {
		if s.Name != cli.WorkflowServer { // the workflow server's name is massgen's
			add(s)
		}
	}
	if inv.Workflow != nil {
		add(*inv.Workflow)
		// A workflow call returns with the coordinator's verdict, which
		// may wait on the other agents: only the turn's end bounds it.
		servers[inv.Workflow.Name].(map[string]any)["timeout"] = workflowTimeout.Milliseconds()
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writePrivate writes a file only its owner reads: it may hold a bearer
// token or an MCP server's credentials.
func writePrivate(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600) // an older file keeps its mode through WriteFile
}

// Check implements cli.Checker: keys without an equivalent, and values
// Claude Code cannot take, are named.
func (Vendor) Check(options map[string]any) []string {
	_, warnings := parseOptions(options)
	return warnings
}

var _ cli.Checker = Vendor{}

func errValue(key string, v any, want string) string {
	return fmt.Sprintf("claude_code: %s: %v is not %s; ignored", key, v, want)
}
