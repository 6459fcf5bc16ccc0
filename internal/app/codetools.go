package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/memory"
	"github.com/massgen/massgen/internal/kit/skills"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/codegen"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// codeTools are one agent's code-based tools in a run (package codegen):
// made before its guard and its command runner, which need the shared
// directory and the hub's endpoint, and bound to its MCP tools once those
// exist (bind).
type codeTools struct {
	agent  *codegen.Agent
	late   *lateSource
	url    string
	token  string
	shared string // the shared tools directory with its hash, or ""
	ws     string
	custom map[string]string // the custom tools tree (custom_tools/, massgen/), or nil
	bound  bool              // its MCP tools are bound (bind)
}

// newCodeTools prepares agent ca's code-based tools, or returns nil when
// it has none: enable_code_based_tools off, no MCP servers to wrap, or no
// command it could run them with. In docker mode the wrappers run in the
// agent's container and reach the hub through the container's relay
// (sandbox/docker's endpoints), as under bubblewrap through the sandbox's.
func (rw *runWorkspaces) newCodeTools(ca config.Agent, workDir, ws string) (*codeTools, error) {
	ct := ca.Backend.CodeTools()
	if !ct.Enabled || ca.Backend.CLI != nil {
		return nil, nil
	}
	var coded []string
	for _, s := range ca.Backend.MCPServers {
		if !slices.Contains(ct.Direct, s.Name) {
			coded = append(coded, s.Name)
		}
	}
	for _, d := range ct.Direct {
		if !slices.ContainsFunc(ca.Backend.MCPServers, func(s config.MCPServer) bool { return s.Name == d }) {
			rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: direct_mcp_servers names %s, which is not one of its mcp_servers", ca.ID, d))
		}
	}
	cl := ca.Backend.CommandLine
	var custom map[string]string
	var src string
	if cl != nil {
		custom, src = rw.customTools(ca, workDir)
	}
	switch {
	case len(coded) == 0 && len(custom) == 0:
		return nil, nil
	case cl == nil:
		rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: enable_code_based_tools needs enable_mcp_command_line (the wrappers run as commands); "+
			"its MCP tools stay function calls", ca.ID))
		return nil, nil
	}
	c := &codeTools{late: &lateSource{}, ws: ws, custom: custom}
	if ct.SharedDir != "" {
		base := ct.SharedDir
		if !filepath.IsAbs(base) {
			base = filepath.Join(workDir, base)
		}
		c.shared = codegen.SharedDir(base, coded, ct.ExcludeCustom, src)
		_, err := os.Stat(c.shared)
		if err := os.MkdirAll(c.shared, 0o755); err != nil {
			return nil, fmt.Errorf("shared_tools_directory: %w", err)
		}
		if err != nil && !slices.Contains(rw.sharedTools, c.shared) {
			rw.sharedTools = append(rw.sharedTools, c.shared) // made by this run: removed as it ends
		}
	}
	if rw.codeHub == nil {
		h, err := codegen.NewHub()
		if err != nil {
			return nil, fmt.Errorf("code-based tools: %w", err)
		}
		rw.codeHub = h
	}
	c.url = rw.codeHub.URL()
	c.agent = codegen.NewAgent(codegen.Options{ID: ca.ID, Source: c.late, Direct: ct.Direct, Shared: c.shared, Root: ws,
		Warn: func(msg string) { rw.snaps.warn(msg) }, Custom: custom})
	c.token = rw.codeHub.Add(c.agent)
	return c, nil
}

// contextPaths are the shared tools directory, which the agent reads and
// never writes (upstream adds it to its paths as read-only too).
func (c *codeTools) contextPaths() []workspace.ContextPath {
	if c == nil || c.shared == "" {
		return nil
	}
	return []workspace.ContextPath{{Path: c.shared}}
}

// sandbox gives the agent's commands the hub: its one way out of a
// sandbox or a container without network, and where the wrappers find it.
func (c *codeTools) sandbox(cfg *sandbox.Config) {
	if c == nil {
		return
	}
	cfg.Endpoints = append(cfg.Endpoints, sandbox.Endpoint{URL: c.url, Key: c.token})
	i := len(cfg.Endpoints) - 1
	cfg.RouteEnv = func(rs []sandbox.Route) []string {
		env := codegen.Env(rs[i].URL, rs[i].Key)
		if c.shared != "" {
			env = append(env, "PYTHONPATH="+c.shared)
		}
		return env
	}
}

// bind gives the agent its MCP tools (src, before the guard) and returns
// what function calling keeps of them; g writes the wrappers into the
// workspace, and every call through the hub passes wrap, as a function
// call would.
func (c *codeTools) bind(src tool.Source, g *workspace.Guard, wrap func(tool.Tool) tool.Tool) tool.Source {
	if c == nil {
		return src
	}
	c.late.set(src)
	c.agent.SetOutput(codegen.GuardWriter(g.WriteFile), wrap)
	c.bound = true
	return c.agent.Direct()
}

// writeUnbound writes the tree of an agent with custom tools and no MCP
// server (no turn resolves its tools, which is when the tree is written).
func (c *codeTools) writeUnbound(g *workspace.Guard) {
	if c != nil && !c.bound {
		c.agent.WriteTree(codegen.GuardWriter(g.WriteFile))
	}
}

// prompt is the system prompt's section on the tools, or "".
func (c *codeTools) prompt(servers []config.MCPServer, direct []string) string {
	if c == nil {
		return ""
	}
	var names []string
	for _, s := range servers {
		if !slices.Contains(direct, s.Name) {
			names = append(names, s.Name)
		}
	}
	p := codegen.Prompt(c.ws, c.shared, names)
	if s := codegen.CustomSection(c.custom); s != "" {
		p += "\n\n" + s
	}
	return p
}

// closeCode stops the hub and removes the shared tools directories this
// run made (upstream removes them as its run ends too).
func (rw *runWorkspaces) closeCode() {
	if rw.codeHub != nil {
		rw.codeHub.Close()
		rw.codeHub = nil
	}
	for _, d := range rw.sharedTools {
		os.RemoveAll(d)
	}
	rw.sharedTools = nil
}

// lateSource is a tool source set after it is handed out.
type lateSource struct {
	mu  sync.Mutex
	src tool.Source
}

func (l *lateSource) set(src tool.Source) {
	l.mu.Lock()
	l.src = src
	l.mu.Unlock()
}

func (l *lateSource) Tools(ctx context.Context) ([]tool.Tool, error) {
	l.mu.Lock()
	src := l.src
	l.mu.Unlock()
	if src == nil {
		return nil, nil
	}
	return src.Tools(ctx)
}

// fileTools are the workspace tools an agent is offered: with
// exclude_file_operation_mcps only write_file and edit_file (upstream's
// filesystem server cut to those two; reading, listing and searching are
// done with commands).
func fileTools(ts []tool.Tool, b config.Backend) []tool.Tool {
	if !b.CodeTools().ExcludeFileOps {
		return ts
	}
	return slices.DeleteFunc(ts, func(t tool.Tool) bool {
		n := t.Def().Name
		return n != "write_file" && n != "edit_file"
	})
}

// customTools is agent ca's custom tools tree and where it comes from:
// custom_tools_path, or with auto_discover_custom_tools massgen's custom
// tools library (codegen.FindLibrary: upstream MassGen's massgen/tool/,
// when this machine has it; massgen ships none). A tool whose TOOL.md
// requires an API key the agent's commands do not get is left out, as
// upstream leaves it out: under bubblewrap commands get no key at all, in
// docker mode those command_line_docker_credentials passes in.
func (rw *runWorkspaces) customTools(ca config.Agent, workDir string) (map[string]string, string) {
	ct := ca.Backend.CodeTools()
	src := ct.CustomPath
	if src != "" && !filepath.IsAbs(src) {
		src = filepath.Join(workDir, src)
	}
	if src == "" && ct.AutoDiscover {
		if rw.customLib == nil {
			lib := codegen.FindLibrary(workDir)
			rw.customLib = &lib
		}
		if src = *rw.customLib; src == "" {
			rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: auto_discover_custom_tools finds no custom tools library: massgen ships "+
				"no Python tool library; upstream MassGen's massgen/tool/ is used when it is in the working directory or installed "+
				"for python3 (custom_tools/ stays for the agent's own tools)", ca.ID))
			return nil, ""
		}
	}
	if src == "" {
		return nil, ""
	}
	have := map[string]bool{}
	if cl := ca.Backend.CommandLine; cl.Mode == "docker" {
		dk, _ := dockerConfig(ca.ID, cl.Docker, workDir) // its warnings are said when the container is set up
		for _, kv := range dk.Credentials.Env {
			k, _, _ := strings.Cut(kv, "=")
			have[k] = true
		}
		for _, k := range dk.Credentials.EnvVars {
			_, have[k] = os.LookupEnv(k)
		}
		if dk.Credentials.PassAllEnv {
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				have[k] = true
			}
		}
	}
	files, left, err := codegen.CustomTree(src, ct.ExcludeCustom, func(k string) bool { return have[k] })
	if err != nil {
		rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: custom tools from %s: %v", ca.ID, src, err))
		return nil, ""
	}
	if len(left) > 0 {
		rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: custom tools left out, their commands do not get the API keys they need: %s",
			ca.ID, strings.Join(left, "; ")))
	}
	return files, src
}

// evolving reports whether agent id gets upstream's evolving skills (with
// task planning, which asks for it): auto_discover_custom_tools, while
// learnings may be written during the rounds (filesystem memory off, or
// learning_capture_mode round), as upstream gates it.
func (rw *runWorkspaces) evolving(cfg *config.Config, id string) bool {
	if !configAgent(cfg, id).Backend.CodeTools().AutoDiscover {
		return false
	}
	k := rw.kit
	return k == nil || !k.memory || k.mode == memory.Round
}

// evolvingNote is the system prompt's evolving skills section, or "".
func evolvingNote(on bool) string {
	if !on {
		return ""
	}
	return "\n\n" + skills.EvolvingSection()
}
