package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/mcp"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// The MCP servers of an agent with a workspace live under the same rules
// as its file tools and commands. They belong to the run, not the team:
// each agent gets its own processes (never shared with an agent that sees
// other files), started under bubblewrap in the agent's view of the file
// system (sandbox.Program), and every call's path-like arguments pass the
// agent's guard first, so a refusal says why in the guard's words.

// runMCP returns the tool source of agent a's MCP servers for this run,
// added to rw's pool (started by withWorkspaces once every agent is set),
// and present, which the agent's OnPresent calls to switch its servers
// between the phases of the run (mcpPhases).
// A sandboxed server is bound with the mounts of the guard's phase when it
// starts: read-only write context paths while agents coordinate, writable
// ones once the guard says the agent presents.
func (rw *runWorkspaces) runMCP(cfg *config.Config, workDir string, ca config.Agent, g *workspace.Guard) (tool.Source, func(bool), error) {
	b := ca.Backend
	if rw.mcp == nil {
		rw.mcp = mcp.NewPool(mcp.Options{Warn: func(msg string) { rw.snaps.warn(msg) }, LeftOut: rw.ignored.leftOut})
	}
	bwrap, noSandbox := sandbox.Bwrap()
	// The same consent as for commands; it may be given without them.
	unsandboxed, _ := b.Extra["command_line_allow_unsandboxed"].(bool)
	// And the same consent for unix sockets (Program).
	network, _ := b.Extra["command_line_allow_network"].(bool)
	dirs := toolDirs(cfg, workDir)
	var servers []mcp.Server
	for _, s := range b.MCPServers {
		srv := mcpServer(s, dirs)
		if srv.Type == "" || srv.Type == mcp.Stdio {
			srv.Owner = ca.ID
			switch {
			case noSandbox == nil:
				// npx and uvx fetch into a cache: it lives in the sandbox's
				// own /tmp, the only writable place besides the workspace.
				env := []string{"PATH=" + searchPath(), "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
					"npm_config_cache=/tmp/.npm", "UV_CACHE_DIR=/tmp/.cache/uv"}
				for k, v := range srv.Env {
					env = append(env, k+"="+v)
				}
				srv.Wrap = func(cmd *exec.Cmd) { sandbox.Program(bwrap, g, cmd, env, network) }
			case unsandboxed:
				rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: MCP server %s runs WITHOUT a sandbox (command_line_allow_unsandboxed: true): "+
					"only its path arguments are checked", ca.ID, s.Name))
			default:
				rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: MCP server %s is left out: an agent with a workspace runs its MCP servers "+
					"in a sandbox, and %v", ca.ID, s.Name, noSandbox))
				rw.dropped = append(rw.dropped, mcpFeature(mcp.LeftOutServer{Agent: ca.ID, Server: s.Name}))
				continue
			}
		}
		servers = append(servers, srv)
	}
	add := func(p *mcp.Pool) (tool.Source, error) {
		var handles []mcp.Handle
		for _, srv := range servers {
			h, err := p.Add(srv)
			if err != nil {
				return nil, fmt.Errorf("MCP server %s: %v", srv.Name, err)
			}
			handles = append(handles, h)
		}
		return p.Tools(ca.ID, handles, b.AllowedTools, b.ExcludeTools), nil
	}
	first, err := add(rw.mcp)
	if err != nil {
		return nil, nil, err
	}
	ph := &mcpPhases{rw: rw, id: ca.ID, add: add, cur: first}
	rw.presMu.Lock()
	rw.phases = append(rw.phases, ph)
	rw.presMu.Unlock()
	return ph, ph.present, nil
}

func searchPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return "/usr/local/bin:/usr/bin:/bin"
}

// closeMCP stops the run's MCP servers.
func (rw *runWorkspaces) closeMCP() {
	if rw.mcp != nil {
		rw.mcp.Close()
	}
	rw.presMu.Lock()
	present := rw.present
	rw.present = nil
	rw.presMu.Unlock()
	for _, p := range present {
		p.Close()
	}
}

// presentLogDir is where the stderr logs of servers restarted for the
// final presentation are kept in a run's log directory.
const presentLogDir = "mcp_final_presentation"

// copyMCPLogs copies the stderr logs of the run's MCP servers into dir.
func (rw *runWorkspaces) copyMCPLogs(dir string) error {
	var errs []error
	if rw.mcp != nil {
		errs = append(errs, rw.mcp.CopyLogs(dir))
	}
	rw.presMu.Lock()
	present := slices.Clone(rw.present)
	rw.presMu.Unlock()
	for i, p := range present {
		sub := filepath.Join(dir, presentLogDir)
		if i > 0 { // a presentation again, after a restart of the run
			sub += fmt.Sprintf("_%d", i+1)
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, p.CopyLogs(sub))
	}
	return errors.Join(errs...)
}

// pathKeys are the argument names of MCP tools that hold paths (upstream's
// server-filesystem and its kin); a key ending in "path" or "paths" counts too.
var pathKeys = []string{"path", "paths", "source", "destination", "file", "files", "directory", "dir", "root", "target", "cwd", "filename"}

func isPathKey(k string) bool {
	k = strings.ToLower(k)
	for _, p := range pathKeys {
		if k == p {
			return true
		}
	}
	return strings.HasSuffix(k, "path") || strings.HasSuffix(k, "paths") || strings.HasSuffix(k, "_dir") || strings.HasSuffix(k, "_file")
}

// guardedTool is an MCP tool of an agent with a workspace: its path-like
// arguments pass the guard before the server sees the call (read access
// for a tool annotated read-only, write access otherwise).
type guardedTool struct {
	t tool.Tool
	g *workspace.Guard
}

func guardMCP(g *workspace.Guard) func(tool.Tool) tool.Tool {
	return func(t tool.Tool) tool.Tool {
		if _, ok := t.(tool.Effects); !ok {
			return t // not an MCP tool
		}
		return guardedTool{t, g}
	}
}

func (gt guardedTool) Def() llm.ToolDef { return gt.t.Def() }

func (gt guardedTool) ReadOnly() bool    { return gt.t.(tool.Effects).ReadOnly() }
func (gt guardedTool) Destructive() bool { return gt.t.(tool.Effects).Destructive() }

func (gt guardedTool) Call(ctx context.Context, args json.RawMessage) tool.Result {
	need := workspace.Write
	if gt.ReadOnly() {
		need = workspace.Read
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return tool.Errorf("the arguments of %s are not a JSON object: %v", gt.Def().Name, err)
	}
	// Each path is checked, then made absolute: the server must act on
	// the very path the guard judged, whatever it takes a relative path
	// (or "~") to mean.
	abs := func(p string) (string, error) {
		if err := gt.g.Check(gt.Def().Name, p, need); err != nil {
			return "", err
		}
		if filepath.IsAbs(p) {
			return p, nil
		}
		return filepath.Join(gt.g.Workspace(), p), nil
	}
	for k, v := range obj {
		if !isPathKey(k) {
			continue
		}
		switch v := v.(type) {
		case string:
			p, err := abs(v)
			if err != nil {
				return tool.Result{Content: err.Error(), IsError: true}
			}
			obj[k] = p
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok {
					p, err := abs(s)
					if err != nil {
						return tool.Result{Content: err.Error(), IsError: true}
					}
					v[i] = p
				}
			}
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return tool.Errorf("%s: %v", gt.Def().Name, err)
	}
	return gt.t.Call(ctx, out)
}
