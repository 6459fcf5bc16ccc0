package app

import (
	"context"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/redact"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// addMCPTools gives each agent the tools of its backend's mcp_servers. The
// team's servers form one pool: a server two agents list (the same
// config) is one process. They all start in the background and in
// parallel as the run begins (startMCP); building the team does not wait
// for them. An agent's turn waits for its own servers when its first
// request needs their tools (tool.Source), so starting them overlaps with
// everything before that.
// t.Close stops them; in massgen serve a cached team keeps its servers
// across requests.
func (t *team) addMCPTools(cfg *config.Config, workDir string) error {
	dirs := toolDirs(cfg, workDir)
	var pool *mcp.Pool
	for i, a := range t.agents {
		b := configAgent(cfg, a.ID).Backend
		if len(b.MCPServers) == 0 || b.Cwd != "" {
			continue // an agent with a workspace has its own, per run (mcp_sandbox.go)
		}
		if pool == nil {
			pool = mcp.NewPool(mcp.Options{Warn: t.mcpWarn, LeftOut: t.mcpLeftOut})
			t.mcp = pool
		}
		var handles []mcp.Handle
		for _, s := range b.MCPServers {
			h, err := pool.Add(mcpServer(s, dirs))
			if err != nil {
				return execErr("agent %s: MCP server %s: %v", a.ID, s.Name, err)
			}
			handles = append(handles, h)
		}
		t.agents[i].Tools = t.agents[i].Tools.WithSources(pool.Tools(a.ID, handles, b.AllowedTools, b.ExcludeTools))
	}
	return nil // the servers start with startMCP
}

// mcpServer is the pool's view of a config entry; a relative cwd, and a
// relative command that exists there, are taken from the config's
// directory (then the working directory), as custom tools are.
func mcpServer(s config.MCPServer, dirs []string) mcp.Server {
	out := mcp.Server{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		URL: s.URL, Headers: s.Headers, UnsetVars: s.UnsetVars, Allowed: s.AllowedTools, Exclude: s.ExcludeTools,
		CallTimeout: seconds(s.TimeoutSeconds), InitTimeout: seconds(s.InitTimeoutSeconds)}
	// A server's credentials (a token in env, an Authorization header) are
	// masked wherever an error about it becomes text, as API keys are.
	for k, v := range s.Env {
		redact.SecretVar(k, v)
	}
	for k, v := range s.Headers {
		if strings.EqualFold(k, "authorization") || redactName(k) {
			redact.Secret(v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
		}
	}
	if out.Cwd != "" && !filepath.IsAbs(out.Cwd) {
		out.Cwd = filepath.Join(dirs[0], out.Cwd)
	}
	if strings.ContainsRune(out.Command, '/') && !filepath.IsAbs(out.Command) {
		if p, err := findFile(out.Command, dirs); err == nil {
			out.Command, _ = filepath.Abs(p)
		}
	}
	return out
}

// redactName reports whether a header's name says it carries a secret
// (X-Api-Key, X-Auth-Token).
func redactName(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "key") || strings.Contains(k, "token") || strings.Contains(k, "secret")
}

// mcpWarn reports a warning of the pool (a server left out, a filter
// that matches no tool), once each. They arise during a run, when the
// tools are first known, and are warnings of the runs in progress; one
// that arises when no run is (massgen serve starting a cached team's
// servers) waits for the next run, which says it first.
func (t *team) mcpWarn(msg string) {
	t.mcpMu.Lock()
	defer t.mcpMu.Unlock()
	if len(t.mcpRuns) == 0 {
		t.mcpPending = append(t.mcpPending, msg)
		return
	}
	for r := range t.mcpRuns {
		r.warn(msg)
	}
}

// mcpLeftOut tells the runs in progress of a server an agent goes
// without (mcp.Options.LeftOut).
func (t *team) mcpLeftOut(l mcp.LeftOutServer) {
	t.mcpMu.Lock()
	runs := slices.Collect(maps.Keys(t.mcpRuns))
	t.mcpMu.Unlock()
	for _, r := range runs {
		r.leftOut(l)
	}
}

// withMCPRun prepares a run of t. The MCP servers' progress and log
// notifications reach the run's events (the orchestrator publishes them
// as ToolProgress, which massgen.log records). The servers start now if
// they have not yet (see startMCP), their stderr logs in logDir, none
// past the run's deadline; ignored hears of the servers its agents go
// without, including those a cached team's earlier run found down. When
// the run is over done copies logs kept elsewhere (a cached team's) into
// the run's log directory (mcp_<name>_stderr.log).
func (t *team) withMCPRun(ctx context.Context, log *slog.Logger, logDir string, deadline time.Time, ignored *runIgnored) (context.Context, func(logDir string)) {
	if t.mcp == nil {
		return ctx, func(string) {}
	}
	t.mcpMu.Lock()
	if t.mcpRuns == nil {
		t.mcpRuns = map[*runIgnored]bool{}
	}
	t.mcpRuns[ignored] = true
	for _, msg := range t.mcpPending {
		ignored.warn(msg)
	}
	t.mcpPending = nil
	t.mcpMu.Unlock()
	t.startMCP(logDir, deadline)
	t.mcp.RetryFailed() // a cached team's server that failed before gets another chance, after a back-off
	for _, l := range t.mcp.LeftOut() {
		ignored.leftOut(l) // still down, not retried yet: the agents go without it in this run too
	}
	for name, path := range t.mcp.StderrLogs() {
		log.Info("MCP server stderr log", "server", name, "path", path)
	}
	return ctx, func(logDir string) {
		t.mcpMu.Lock()
		delete(t.mcpRuns, ignored)
		t.mcpMu.Unlock()
		if logDir == "" {
			return
		}
		if err := t.mcp.CopyLogs(logDir); err != nil {
			log.Warn("copying the MCP servers' stderr logs", "error", err)
		}
	}
}

// startMCP starts the team's MCP servers, once, with their stderr logs in
// logDir ("" = a temporary directory of the team's) and, for a one-run
// team, none past the run's deadline (zero: none). A one-run team starts
// them as its run begins, so that the logs are written in the run's log
// directory as they go and a crashed run keeps them. A team massgen serve
// caches outlives its runs: it starts them when it is built, logs in a
// directory of its own (massgen-mcp-* under the temporary directory, named
// in each run's massgen.log), copied into each run's directory at its end.
func (t *team) startMCP(logDir string, deadline time.Time) {
	if t.mcp != nil {
		t.mcp.StartBy(logDir, deadline)
	}
}

// runDeadline is when a run of cfg that starts now must end, less its
// presentation grace: what bounds the start of the run's MCP servers.
func runDeadline(cfg *config.Config) time.Time {
	d := seconds(cfg.Orchestrator.TimeoutSeconds)
	if d <= 0 {
		d = coord.DefaultTimeout
	}
	return time.Now().Add(d)
}
