// Package copilot runs GitHub Copilot CLI (npm @github/copilot, program
// copilot; pinned 1.0.102) as a team member: backend type copilot.
//
// Endpoint and key. Copilot CLI talks to GitHub's Copilot service with
// the user's GitHub login, or, with COPILOT_PROVIDER_BASE_URL set, to a
// model provider of one's own (BYOK): "GitHub authentication is not
// required" (`copilot help environment`). With a base URL the vendor sets
// COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_TYPE (provider_type: openai,
// the default, for any OpenAI-compatible endpoint; anthropic; azure),
// COPILOT_PROVIDER_WIRE_API (wire_api: completions, the default, or
// responses), COPILOT_PROVIDER_API_KEY and COPILOT_OFFLINE=true (no GitHub
// authentication, telemetry, web tools, GitHub MCP server or update
// check). Without one it sets COPILOT_GITHUB_TOKEN to the key, if any, for
// GitHub's service.
//
// Each task runs `copilot --output-format json --allow-all --no-ask-user
// --no-auto-update --disable-client-telemetry --disable-builtin-mcps
// --no-custom-instructions --model <model> [--agent massgen]
// --usage-output-file <file>` in the agent's workspace with the task's
// message on standard input. It lays out under the CLI's private home
// (COPILOT_HOME=<home>/.copilot):
//
//   - mcp-config.json: massgen's workflow tools over streamable HTTP with
//     their bearer header (a file, not --additional-mcp-config, so the
//     token is not on a command line) and the agent's own servers, every
//     tool enabled;
//   - agents/massgen.agent.md: the agent's instructions as a custom agent
//     (--agent massgen), which Copilot adds to its own system prompt, as
//     upstream's SDK session gives its system message.
//
// Approval: --allow-all (every tool, path and URL without asking; prompt
// mode needs --allow-all-tools at least) and --no-ask-user: massgen's
// sandbox is the enforcement. Running as root is allowed. The workspace
// does not configure the CLI: --no-custom-instructions leaves its
// AGENTS.md and .github instructions unread, and the folder is not
// trusted (no --trust-folder), so its MCP servers, hooks and plugins are
// not loaded.
//
// The program run is the native binary of the npm package
// (@github/copilot-linux-x64/copilot; Executable), not its node launcher,
// which would start it as a child. On its first run in a home it unpacks
// itself into <home>/.cache/copilot (about 235 MB, a few seconds); later
// tasks of the agent reuse it.
//
// Sessions: every task starts a new session, as for the other CLIs (the
// prompts are whole); its id is reported.
//
// Output: assistant.message_delta becomes Text, assistant.reasoning_delta
// Reasoning, tool.execution_start/complete of its own tools ToolUsed (the
// workflow tools are the workflow server's), model.call_failure a failed
// ModelCall (a request the CLI may retry); session.error the task's
// error, an *llm.Error with the provider's status (an unreachable
// endpoint, which it tries for about 25 s, has none). Copilot leaves its
// per-call usage (assistant.usage) out of its JSON output, so the usage
// comes from --usage-output-file once the CLI ends: one ModelCall per
// model, with that model's requests and tokens.
package copilot

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/massgen/massgen/internal/agent/cli"
)

// Type is the backend type.
const Type = "copilot"

// DefaultModel is upstream's default (backend/copilot.py).
const DefaultModel = "gpt-5-mini"

// agentName is the custom agent holding the agent's instructions.
const agentName = "massgen"

var (
	providerTypes = []string{"openai", "anthropic", "azure"}
	wireAPIs      = []string{"completions", "responses"}
)

func init() { cli.Register(Vendor{}) }

// Vendor is Copilot CLI's cli.Vendor (and cli.Checker).
type Vendor struct{}

func (Vendor) Type() string                          { return Type }
func (Vendor) Program() string                       { return "copilot" }
func (Vendor) Decoder() cli.Decoder                  { return newDecoder("") }
func (Vendor) Check(options map[string]any) []string { return check(options) }

// tasks numbers the usage files of one process's tasks.
var tasks atomic.Int64

// Prepare writes the CLI's MCP configuration and custom agent under
// inv.Home and returns its command line.
func (Vendor) Prepare(inv *cli.Invocation) (cli.Command, error) {
	o, err := options(inv.Options)
	if err != nil {
		return cli.Command{}, err
	}
	home := filepath.Join(inv.Home, ".copilot")
	for _, d := range []string{home, filepath.Join(home, "agents")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return cli.Command{}, err
		}
	}
	cfg, err := json.MarshalIndent(MCPConfig(inv), "", "  ")
	if err != nil {
		return cli.Command{}, err
	}
	if err := os.WriteFile(filepath.Join(home, "mcp-config.json"), cfg, 0o600); err != nil {
		return cli.Command{}, err
	}
	usage := filepath.Join(inv.Home, fmt.Sprintf("usage-%d.json", tasks.Add(1)))
	_ = os.Remove(usage)
	args := []string{"--output-format", "json", "--allow-all", "--no-ask-user", "--no-auto-update",
		"--disable-client-telemetry", "--disable-builtin-mcps", "--no-custom-instructions",
		"--model", cmp.Or(inv.Model, o.model, DefaultModel), "--usage-output-file", usage}
	agentFile := filepath.Join(home, "agents", agentName+".agent.md")
	if strings.TrimSpace(inv.System) != "" {
		body := "---\nname: " + agentName + "\ndescription: A member of a MassGen team.\n---\n" + inv.System + "\n"
		if err := os.WriteFile(agentFile, []byte(body), 0o600); err != nil {
			return cli.Command{}, err
		}
		args = append(args, "--agent", agentName)
	} else if err := os.Remove(agentFile); err != nil && !os.IsNotExist(err) {
		return cli.Command{}, err
	}
	if o.effort != "" {
		args = append(args, "--reasoning-effort", o.effort)
	}
	env := []string{"COPILOT_HOME=" + home, "COPILOT_AUTO_UPDATE=false"}
	if inv.BaseURL != "" {
		base := strings.TrimRight(inv.BaseURL, "/")
		if o.provider == "anthropic" {
			base = strings.TrimSuffix(base, "/v1") // its SDK adds /v1/messages
		}
		env = append(env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+base,
			"COPILOT_PROVIDER_TYPE="+o.provider, "COPILOT_PROVIDER_WIRE_API="+o.wire)
		if inv.APIKey != "" {
			env = append(env, "COPILOT_PROVIDER_API_KEY="+inv.APIKey)
		}
	} else if inv.APIKey != "" {
		env = append(env, "COPILOT_GITHUB_TOKEN="+inv.APIKey)
	}
	return cli.Command{Args: args, Env: env, Stdin: inv.Prompt, Decoder: newDecoder(usage)}, nil
}

// MCPConfig is the mcp-config.json of one task.
func MCPConfig(inv *cli.Invocation) map[string]any {
	servers := map[string]any{}
	all := slices.Clone(inv.MCPServers)
	if inv.Workflow != nil {
		all = append(all, *inv.Workflow)
	}
	for _, m := range all {
		s := map[string]any{"tools": []string{"*"}}
		if m.URL != "" {
			s["type"], s["url"] = "http", m.URL
			if len(m.Headers) > 0 {
				s["headers"] = m.Headers
			}
		} else {
			s["type"], s["command"] = "local", m.Command
			s["args"] = append([]string{}, m.Args...)
			if len(m.Env) > 0 {
				s["env"] = m.Env
			}
		}
		servers[m.Name] = s
	}
	return map[string]any{"mcpServers": servers}
}

type opts struct {
	model, provider, wire, effort string
}

// options reads the backend keys the vendor takes.
func options(o map[string]any) (opts, error) {
	r := opts{provider: "openai", wire: "completions"}
	r.model, _ = o["model"].(string)
	for _, k := range []struct {
		key     string
		dst     *string
		choices []string
	}{{"provider_type", &r.provider, providerTypes}, {"wire_api", &r.wire, wireAPIs}} {
		v, ok := o[k.key]
		if !ok || v == nil {
			continue
		}
		s, _ := v.(string)
		if !slices.Contains(k.choices, s) {
			return r, fmt.Errorf("%s %v: Copilot CLI takes one of %s", k.key, v, strings.Join(k.choices, ", "))
		}
		*k.dst = s
	}
	if s, ok := o["reasoning_effort"].(string); ok {
		r.effort = s
	} else if m, ok := o["reasoning"].(map[string]any); ok {
		r.effort, _ = m["effort"].(string)
	}
	return r, nil
}

var (
	taken   = []string{"model", "provider_type", "wire_api", "reasoning_effort", "reasoning"}
	handled = []string{"cwd", "context_paths", "workspace_max_size_mb", "enable_mcp_command_line", "mcp_servers", "custom_tools", "system_message"}
)

// check names the keys Copilot CLI has no equivalent for.
func check(o map[string]any) []string {
	var warnings []string
	if _, err := options(o); err != nil {
		warnings = append(warnings, err.Error()+": its tasks will fail")
	}
	warnings = append(warnings, cli.Unused(o, "Copilot CLI", taken, handled)...)
	return warnings
}
