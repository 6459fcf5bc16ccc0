package app

import (
	"cmp"
	"fmt"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// A coding-agent CLI (claude_code, codex, gemini_cli) is a team member
// whose agent is the vendor's own program (internal/agent/cli). The team
// finds the program and its key once; each run gives it a workspace, a
// private home and the agent's sandbox, so the CLI writes and runs
// nothing outside what the agent was given, whatever its own permission
// settings say.

// cliMember is what a team knows of one CLI agent.
type cliMember struct {
	vendor  cli.Vendor
	path    string
	model   string
	baseURL string
	apiKey  string
	options map[string]any
	mcp     []cli.MCPServer

	// login: without a key, the files of the user's own login of the
	// CLI (relative to userHome), copied into its home each run
	// (clilogin.go).
	login    []string
	userHome string

	// tools are its custom tools, served to the CLI over MCP (addCustomTools).
	tools []tool.Tool
	// unsandboxed: the user consented to run it without bubblewrap
	// (command_line_allow_unsandboxed), where there is none.
	unsandboxed bool
	// network: the user consented to give it the host's network
	// (command_line_allow_network); otherwise it reaches only its
	// endpoints (clinetwork.go).
	network bool
	// docker: command_line_execution_mode: docker (clidocker.go), with
	// its container's network mode.
	docker    bool
	dockerNet string
}

// cliInstallDir is where `massgen setup cli` installs the CLIs' programs
// (npm --prefix $XDG_DATA_HOME/massgen/cli, by default
// ~/.local/share/massgen/cli): found after PATH. Not under a .massgen
// directory: a run started in the home directory hides its .massgen from
// the agents' sandboxes, the CLI's program with it.
func cliInstallDir(getenv func(string) string) string {
	data := getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(cmp.Or(getenv("HOME"), os.Getenv("HOME")), ".local", "share")
	}
	return filepath.Join(data, "massgen", "cli", "node_modules", ".bin")
}

// cliPackages are the npm packages of the CLIs, pinned: what the not-found
// error tells to install.
var cliPackages = map[string]string{
	"claude_code": "@anthropic-ai/claude-code@2.1.332",
	"codex":       "@openai/codex@0.171.0",
	"gemini_cli":  "@google/gemini-cli@0.61.0",
	"copilot":     "@github/copilot@1.0.102",
}

// newCLIMember checks that the CLI of a can run here and resolves its
// program, endpoint and key.
func newCLIMember(a config.Agent, getenv func(string) string) (*cliMember, []string, error) {
	b := a.Backend
	v, ok := cli.Lookup(b.Type)
	if !ok {
		return nil, nil, execErr("agent %s: no %s agent is linked into this program", a.ID, b.Type)
	}
	path, err := cli.Find(v, cliInstallDir(getenv))
	if err != nil {
		return nil, nil, usageErr("agent %s: %v: install it with `massgen setup cli %s` (or `npm install -g %s`)",
			a.ID, err, b.Type, cliPackages[b.Type])
	}
	spec, _ := provider.Lookup(b.Type)
	m := &cliMember{vendor: v, path: path, model: b.Model, options: map[string]any{},
		baseURL: cmp.Or(baseURLOverride(b.Type, getenv), b.BaseURL)}
	maps.Copy(m.options, b.Extra)
	maps.Copy(m.options, b.CLI)
	if len(b.AllowedTools) > 0 {
		m.options["allowed_tools"] = b.AllowedTools
	}
	if len(b.ExcludeTools) > 0 {
		m.options["exclude_tools"] = b.ExcludeTools
	}
	m.unsandboxed, _ = b.Extra["command_line_allow_unsandboxed"].(bool)
	m.network, _ = b.Extra["command_line_allow_network"].(bool)
	if b.APIKeyUnsetVar != "" {
		return nil, nil, usageErr("agent %s: api_key refers to %s, which is not set: set it (in the environment or a .env file); "+
			"massgen does not fall back to another key", a.ID, b.APIKeyUnsetVar)
	}
	m.apiKey = b.APIKey
	for _, name := range spec.KeyEnv {
		m.apiKey = cmp.Or(m.apiKey, getenv(name))
	}
	registerSecrets(m.apiKey, getenv)
	if m.apiKey == "" && !localEndpoint(m.baseURL) {
		m.userHome = userHome(getenv)
		if m.login = cli.FindLogin(v, m.userHome); len(m.login) == 0 {
			return nil, nil, noCredentials(a.ID, b.Type, spec.KeyEnv, v, m.userHome)
		}
	}
	if m.apiKey == "" && len(m.login) == 0 {
		// A local endpoint takes no key, but the CLIs refuse to start
		// without one (Claude Code: "Not logged in").
		m.apiKey = "massgen-local-endpoint"
	}
	for _, s := range b.MCPServers {
		m.mcp = append(m.mcp, cli.MCPServer{Name: s.Name, URL: s.URL, Headers: s.Headers, Command: s.Command, Args: s.Args, Env: s.Env})
	}
	var warnings []string
	if len(m.login) > 0 && !m.network {
		warnings = append(warnings, loginNetworkWarning(a.ID, b.Type))
	}
	if c, ok := v.(cli.Checker); ok {
		for _, w := range c.Check(m.options) {
			warnings = append(warnings, fmt.Sprintf("agent %s: %s", a.ID, w))
		}
	}
	if cl := b.CommandLine; cl != nil && cl.Mode == "docker" {
		m.docker, m.dockerNet = true, cl.Docker.Network
		if w := cliDockerWarning(a.ID, v, path); w != "" {
			warnings = append(warnings, w)
		}
	}
	return m, warnings, nil
}

// withCLIAgents gives each CLI agent of the run its agent: the CLI in the
// agent's workspace (made by withWorkspaces) and sandbox, with a private
// home that the run removes at its end (close).
func (rw *runWorkspaces) withCLIAgents(members map[string]*cliMember, agents []orchestrator.Agent) ([]orchestrator.Agent, error) {
	if len(members) == 0 {
		return agents, nil
	}
	sweepCLIHomes()
	bwrap, noSandbox := sandbox.Bwrap()
	for i := range agents {
		m := members[agents[i].ID]
		if m == nil {
			continue
		}
		id := agents[i].ID
		g := rw.guards[id]
		if g == nil {
			return nil, execErr("agent %s: its CLI has no workspace", id)
		}
		home, err := os.MkdirTemp("", fmt.Sprintf("%s%d-%s-", cliHomePrefix, os.Getpid(), safeName(id)))
		if err != nil {
			return nil, execErr("agent %s: cannot make its CLI's home: %w", id, err)
		}
		rw.cliHomes = append(rw.cliHomes, home)
		if len(m.login) > 0 {
			if err := copyLogin(m, home); err != nil {
				return nil, execErr("agent %s: its CLI's login: %v", id, err)
			}
		}
		a := &cli.Agent{ID: id, Vendor: m.vendor, Path: m.path, Model: m.model, BaseURL: m.baseURL, APIKey: m.apiKey,
			Workdir: g.Workspace(), Home: home, MCPServers: m.mcp, Options: m.options, Tools: m.tools}
		switch c := rw.cliContainer(id, m); {
		case c != nil:
			rw.warnings = append(rw.warnings, dockerCLI(a, m, c)...)
		case noSandbox == nil:
			rw.warnings = append(rw.warnings, sandboxCLI(a, m, bwrap, g)...)
			rw.warnings = append(rw.warnings, rw.commandsToContainer(a, m)...)
		case m.unsandboxed:
			rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: its %s CLI runs WITHOUT a sandbox (command_line_allow_unsandboxed: true): "+
				"it can change any file this user can", id, m.vendor.Type()))
		default:
			return nil, usageErr("agent %s: a %s agent runs in a sandbox, and %v", id, m.vendor.Type(), noSandbox)
		}
		rw.cliAgents = append(rw.cliAgents, a)
		agents[i].Impl = a
	}
	return agents, nil
}

// closeCLIAgents stops the CLI agents' workflow servers and removes their
// homes: nothing of a CLI's settings or sessions outlives the run.
func (rw *runWorkspaces) closeCLIAgents() {
	for _, a := range rw.cliAgents {
		a.Close()
	}
	for _, h := range rw.cliHomes {
		os.RemoveAll(h)
	}
}

// cliHomePrefix begins the name of a CLI's private home in the temporary
// directory; the process id of the massgen that made it follows.
const cliHomePrefix = "massgen-cli-"

// sweepCLIHomes removes the CLI homes of massgen processes that are gone:
// a run killed with SIGKILL could not remove its own, and a CLI's
// settings (its MCP configuration, with a workflow server's token) must
// not wait there for the next run.
func sweepCLIHomes() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), cliHomePrefix+"*"))
	for _, d := range dirs {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), cliHomePrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(d)
	}
}

// guardOf records an agent's guard for the parts of a run that start
// programs in its view (CLI agents).
func (rw *runWorkspaces) guardOf(id string, g *workspace.Guard) {
	if rw.guards == nil {
		rw.guards = map[string]*workspace.Guard{}
	}
	rw.guards[id] = g
}

// addCLIAgent adds a CLI agent to the team: its member, and the
// orchestrator's view of it (its Impl is made per run).
func (t *team) addCLIAgent(a config.Agent, getenv func(string) string) error {
	m, warnings, err := newCLIMember(a, getenv)
	if err != nil {
		return err
	}
	t.warnings = append(t.warnings, warnings...)
	var cost func(llm.Usage) float64
	if m.model != "" {
		if info, priced, err := provider.LookupModel(m.model, getenv); err == nil && priced {
			cost = info.Cost
		}
	}
	if t.cli == nil {
		t.cli = map[string]*cliMember{}
	}
	t.cli[a.ID] = m
	t.agents = append(t.agents, orchestrator.Agent{ID: a.ID, Backend: a.Backend.Type,
		ModelName: cmp.Or(m.model, a.Backend.Type+" default"), SystemMessage: a.SystemMessage, Cost: cost})
	return nil
}
