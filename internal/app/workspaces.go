package app

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/massgen/massgen/internal/agent/cli"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/store"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/codegen"
	"github.com/massgen/massgen/internal/tool/files"
	"github.com/massgen/massgen/internal/tool/mcp"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// maxFinalCopy bounds the winner's workspace copied into the logs.
const maxFinalCopy = 1 << 30

// runWorkspaces are the workspaces of one run: one fresh directory per
// agent with a `cwd`, under .massgen/workspaces/<run>/, so parallel runs
// (and massgen serve requests sharing a team) never share one.
type runWorkspaces struct {
	dir      string                   // .massgen/workspaces/<run>
	dirs     map[string]string        // agent id → its workspace
	watches  map[string]*contextWatch // agent id → its write context paths
	warnings []string
	dropped  []string   // what the config asks that the agents go without (no Docker engine, no sandbox)
	snaps    *snapshots // nil when no agent has a workspace
	mcp      *mcp.Pool  // the MCP servers of agents with a workspace (mcp_sandbox.go)
	presMu   sync.Mutex
	present  []*mcp.Pool       // the presenter's servers restarted for the final presentation
	phases   []*mcpPhases      // each agent's MCP servers through the run's phases (mcp_phases.go)
	runners  []*sandbox.Runner // the agents' command runners (docker mode holds a container)
	ignored  *runIgnored       // what the run did not do: its report (leftout.go)

	// codeHub is code-based tools' endpoint, sharedTools the shared tools
	// directories this run made (codetools.go).
	codeHub     *codegen.Hub
	customLib   *string // massgen's custom tools library, once looked for (codetools.go)
	sharedTools []string

	// guards are the agents' guards; cliAgents and cliHomes the run's
	// coding-agent CLIs and their private homes (cliagents.go).
	guards    map[string]*workspace.Guard
	cliAgents []*cli.Agent
	cliHomes  []string
	iso       *runIsolation // write_mode's copies (isolation.go)
	kit       *runKit       // memory and skills (kit.go)
}

// closeRunners removes the containers of the agents' commands.
func (rw *runWorkspaces) closeRunners() {
	rw.closeCode()
	for _, r := range rw.runners {
		r.Close()
	}
}

// commandFeature is the stable name, in a run's WARNINGS and status.json's
// meta.ignored_features, of the commands an agent cannot run (its
// execute_command answers every call with why): docker mode without a
// Docker engine, local mode without bubblewrap.
func commandFeature(cl *config.CommandLine, agent string) string {
	return fmt.Sprintf("command_line_execution_mode: %s (agent %s)", cmp.Or(cl.Mode, "local"), agent)
}

// dockerConfig is docker mode's container of agent as the config describes
// it, with the variables of its env_file read (dockerenv.go), and what the
// user should know about them.
func dockerConfig(agent string, d config.Docker, workDir string) (sandbox.Docker, []string) {
	home, _ := os.UserHomeDir()
	env, warnings := dockerFileEnv(agent, d, workDir, home)
	return sandbox.Docker{Image: d.Image, Memory: d.Memory, CPUs: d.CPUs, Network: d.Network, Sudo: d.Sudo,
		Credentials: sandbox.Credentials{Files: d.CredentialFiles, EnvVars: d.CredentialEnv, Env: env, PassAllEnv: d.PassAllEnv,
			Mounts: sandboxMounts(d.Mounts)},
		Packages: sandbox.Packages{System: d.System, Python: d.Python, NPM: d.NPM}}, warnings
}

// setLogDir tells the watches where to keep the originals of context paths.
func (rw *runWorkspaces) setLogDir(dir string) {
	if rw.snaps != nil {
		rw.snaps.setLogDir(dir)
	}
	for _, w := range rw.watches {
		w.mu.Lock()
		w.logDir = dir
		w.mu.Unlock()
	}
}

// snapshot is the orchestrator's Options.Snapshot for this run (nil: no
// agent has a workspace).
func (rw *runWorkspaces) snapshot() func(agent, label string) string {
	if rw.snaps == nil {
		return nil
	}
	return rw.snaps.take
}

// contextChanges are what the winner changed in its write context paths.
func (rw *runWorkspaces) contextChanges(winner string) []string {
	if w := rw.watches[winner]; w != nil {
		return w.changes()
	}
	return nil
}

// withWorkspaces gives every agent whose backend has a `cwd` its run's
// workspace, a guard over it and the context paths, and the file tools
// (plus execute_command with enable_mcp_command_line). agents is left as
// it is, since a team may be shared by concurrent runs. A missing context
// path, or a file where a directory is expected, fails here, before any
// request is made.
func withWorkspaces(cfg *config.Config, workDir string, now time.Time, agents []orchestrator.Agent, extra ...config.ContextPath) ([]orchestrator.Agent, *runWorkspaces, error) {
	rw := &runWorkspaces{dirs: map[string]string{}, watches: map[string]*contextWatch{}, ignored: &runIgnored{}, warnings: kitWarnings(cfg)}
	has := false
	for _, a := range cfg.Agents {
		has = has || a.Backend.Cwd != ""
	}
	if !has {
		if len(extra) > 0 {
			// Shared by @path in the question or by --cwd-context: name
			// the paths, not a flag the user may never have given.
			names := make([]string, len(extra))
			for i, cp := range extra {
				names[i] = cp.Path
				switch rel, err := filepath.Rel(workDir, cp.Path); {
				case err == nil && rel == ".":
					names[i] = "the current directory"
				case err == nil && filepath.IsLocal(rel):
					names[i] = rel
				}
			}
			rw.warnings = append(rw.warnings, "no agent of this team has a workspace (cwd), so "+strings.Join(names, ", ")+
				" is shared with no agent: give the agents that should see your files a cwd")
		}
		return withChangedoc(cfg, agents, nil, nil), rw, nil
	}
	root := filepath.Join(workDir, ".massgen", "workspaces")
	run := runName(now)
	rw.dir = filepath.Join(root, run)
	o := cfg.Orchestrator
	rw.snaps = &snapshots{
		store: filepath.Join(dirUnder(workDir, o.SnapshotStorage, "snapshots"), run),
		temp:  filepath.Join(dirUnder(workDir, o.AgentTemporaryWorkspace, "temp_workspaces"), run),
		live:  rw.dirs, now: time.Now, latest: map[string]string{}, count: map[string]int{},
		mappings: map[string]snapshotMapping{},
	}
	for _, d := range []string{rw.snaps.store, rw.snaps.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, execErr("cannot create %s for the workspaces' snapshots: %w", d, err)
		}
	}
	kit, warnings, err := newRunKit(cfg, workDir)
	if err != nil {
		return nil, nil, err
	}
	rw.kit, rw.warnings = kit, append(rw.warnings, warnings...)
	out := slices.Clone(agents)
	done := false
	defer func() {
		if !done {
			rw.closeRunners() // a later agent's error: no container is left behind
		}
	}()
	for i := range out {
		ca := configAgent(cfg, out[i].ID)
		if ca.Backend.Cwd == "" {
			continue
		}
		dir := filepath.Join(rw.dir, safeName(out[i].ID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, execErr("cannot create the workspace of agent %s: %w", out[i].ID, err)
		}
		ctxPaths, err := contextPaths(workDir, slices.Concat(cfg.Orchestrator.ContextPaths, ca.Backend.ContextPaths, extra))
		if err != nil {
			return nil, nil, usageErr("agent %s: %v", out[i].ID, err)
		}
		kp, err := rw.kit.policy(dir)
		if err != nil {
			return nil, nil, execErr("agent %s: %v", out[i].ID, err)
		}
		ctxPaths = append(ctxPaths, kp.shared...)
		code, err := rw.newCodeTools(ca, workDir, dir)
		if err != nil {
			return nil, nil, execErr("agent %s: %v", out[i].ID, err)
		}
		ctxPaths = append(ctxPaths, code.contextPaths()...) // the shared tools directory, read-only
		for _, w := range missingProtected(ctxPaths) {
			if !slices.Contains(rw.warnings, w) { // once, not once per agent
				rw.warnings = append(rw.warnings, w)
			}
		}
		// All of .massgen is hidden (the others' workspaces, this run's
		// logs and backups), should a context path contain it; the
		// agent's own workspace inside stays its own.
		view := rw.snaps.viewDir(out[i].ID)
		if err := os.MkdirAll(view, 0o755); err != nil {
			return nil, nil, execErr("cannot create the directory of agent %s's view of the others' files: %w", out[i].ID, err)
		}
		// The others' snapshots are read-only to it, by the guard and in
		// the sandbox alike; the snapshot store itself stays hidden.
		g, err := workspace.New(workspace.Policy{Agent: out[i].ID, Workspace: dir, Context: slices.Concat(ctxPaths, kp.context),
			ReadOnly: append([]string{view}, kp.readOnly...), Hidden: []string{filepath.Dir(root), rw.snaps.store, rw.snaps.temp},
			MaxBytes: int64(ca.Backend.WorkspaceMaxMB) << 20, Writable: kp.writable})
		if err != nil {
			return nil, nil, usageErr("agent %s: %v", out[i].ID, err)
		}
		rw.guardOf(out[i].ID, g)
		tools := fileTools(files.Tools(g), ca.Backend)
		if cl := ca.Backend.CommandLine; cl != nil {
			var dk sandbox.Docker
			if cl.Mode == "docker" {
				var warnings []string
				dk, warnings = dockerConfig(out[i].ID, cl.Docker, workDir)
				rw.warnings = append(rw.warnings, warnings...)
			}
			scfg := sandbox.Config{Mode: cl.Mode, Allowed: cl.Allowed, Blocked: cl.Blocked,
				Unsandboxed: cl.AllowUnsandboxed, Network: cl.AllowNetwork, Docker: dk, MaxProcesses: cl.MaxProcesses}
			code.sandbox(&scfg)
			r, err := sandbox.New(g, scfg)
			if err != nil {
				return nil, nil, usageErr("agent %s: %v", out[i].ID, err)
			}
			rw.runners = append(rw.runners, r)
			rw.warnings = append(rw.warnings, r.Warnings()...)
			switch {
			case r.Disabled() != nil:
				rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: execute_command cannot run: %v", out[i].ID, r.Disabled()))
				rw.dropped = append(rw.dropped, commandFeature(cl, out[i].ID))
			case !r.Sandboxed():
				rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s runs commands WITHOUT a sandbox (command_line_allow_unsandboxed: true): "+
					"they can change any file this user can", out[i].ID))
			}
			tools = append(tools, files.Command(r))
		}
		set, err := out[i].Tools.With(tools...)
		if err != nil {
			return nil, nil, usageErr("agent %s: %v", out[i].ID, err)
		}
		// The winner keeps its workspace tools (its MCP servers' too) for
		// the final presentation, the one moment the write context paths
		// open (for it alone).
		present, err := tool.NewSet(tools...)
		if err != nil {
			return nil, nil, usageErr("agent %s: %v", out[i].ID, err)
		}
		var presentMCP func(bool)
		if len(ca.Backend.MCPServers) > 0 && ca.Backend.CLI == nil { // a CLI starts its own, in its sandbox
			src, presentFn, err := rw.runMCP(cfg, workDir, ca, g)
			if err != nil {
				rw.closeMCP()
				return nil, nil, execErr("agent %s: %v", out[i].ID, err)
			}
			// Code-based tools keep the direct servers' tools; the others'
			// calls come through the hub, past the same guard.
			src = code.bind(src, g, func(t tool.Tool) tool.Tool { return tool.KeepWhole(g.Workspace())(guardMCP(g)(t)) })
			set = set.WithSources(src).Map(guardMCP(g))
			present = present.WithSources(src).Map(guardMCP(g))
			presentMCP = presentFn
		}
		code.writeUnbound(g) // custom tools and no MCP server to wrap
		// A result too long for the model is kept whole in the workspace,
		// where the file tools can read it in parts (tool.KeepWhole).
		keep := tool.KeepWhole(g.Workspace())
		out[i].Tools, out[i].PresentTools = set.Map(keep), present.Map(keep)
		out[i].OnPresent = g.SetFinalPresentation
		// The run's own files, written while the presenter works, stay out
		// of the report of its changes (the log directory is added later).
		db := store.DefaultPath(workDir)
		if w := newContextWatch(ctxPaths, rw.dir, rw.snaps.store, rw.snaps.temp, db, db+"-wal", db+"-shm", db+"-journal"); len(w.paths) > 0 {
			id := out[i].ID
			rw.watches[id] = w
			out[i].OnPresent = func(on bool) {
				if on {
					w.start(id)
					g.SetFinalPresentation(true)
					return
				}
				g.SetFinalPresentation(false)
				w.stop(id)
				w.refused(g.Reverted())
			}
			if cfg.Orchestrator.Isolation.Isolates() {
				out[i].OnPresent = rw.isolatedPresent(id) // write_mode: the real paths stay closed
			}
		}
		if on := out[i].OnPresent; presentMCP != nil {
			// The guard opens the write context paths first, so the
			// restarted servers are bound with them writable, and closes
			// them once those servers are stopped.
			out[i].OnPresent = func(present bool) {
				if present {
					on(true)
					presentMCP(true)
					return
				}
				presentMCP(false)
				on(false)
			}
		}
		id := out[i].ID
		out[i].BeforeTurn = func(shown []coord.Answer) { rw.snaps.show(id, shown) }
		out[i].SystemMessage = strings.TrimSpace(out[i].SystemMessage + "\n\n" + workspaceNote(g.Workspace(), view, writeModeNote(cfg, ctxPaths)))
		if p := code.prompt(ca.Backend.MCPServers, ca.Backend.CodeTools().Direct); p != "" {
			out[i].SystemMessage += "\n\n" + p
		}
		rw.dirs[out[i].ID] = g.Workspace()
	}
	if err := rw.withIsolation(cfg, out); err != nil {
		rw.closeMCP()
		return nil, nil, err
	}
	out = withChangedoc(cfg, out, rw.dirs, rw.snaps.viewDir)
	if rw.mcp != nil {
		rw.mcp.StartBy("", runDeadline(cfg))
		rw.stopMCPWhenOthersPresent(out)
	}
	done = true
	return out, rw, nil
}

// protectedNames are protected at every depth of a write context path,
// whether they exist or not: version control (a hook or core.fsmonitor
// there runs at the user's next git command), secrets, and massgen's own
// files (a planted .massgen/config.yaml would be the user's next run's).
var protectedNames = []string{".git", ".env*", ".massgen"}

// contextPaths resolves config context paths (relative to workDir) and
// checks that each exists: a directory, or a file (then only that file is
// shared) unless the path ends with a slash.
func contextPaths(workDir string, cps []config.ContextPath) ([]workspace.ContextPath, error) {
	var out []workspace.ContextPath
	for _, cp := range cps {
		p := cp.Path
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("context path %s does not exist (%v); create it or fix context_paths", cp.Path, err)
		case !fi.IsDir() && strings.HasSuffix(cp.Path, "/"):
			return nil, fmt.Errorf("context path %s is a file, but its slash says a directory is expected; drop the slash to share the file", cp.Path)
		}
		var prot, names []string
		if cp.Permission == "write" {
			names = protectedNames
		}
		for _, pp := range cp.ProtectedPaths {
			full := pp
			if !filepath.IsAbs(full) {
				full = filepath.Join(p, full)
			}
			if strings.HasSuffix(pp, "/") {
				full += "/" // the guard makes a directory to stand for it
			}
			prot = append(prot, full)
		}
		out = append(out, workspace.ContextPath{Path: p, Write: cp.Permission == "write", Protected: prot, ProtectedNames: names})
	}
	return out, nil
}

// missingProtected says which protected paths do not exist (a typo is
// likely), and that they are protected all the same.
func missingProtected(cps []workspace.ContextPath) []string {
	var out []string
	for _, cp := range cps {
		for _, pp := range cp.Protected {
			if _, err := os.Lstat(strings.TrimSuffix(pp, "/")); err != nil {
				out = append(out, fmt.Sprintf("context path %s: protected path %s does not exist; it stays protected "+
					"(nothing may create it), but check protected_paths for a typo", cp.Path, pp))
			}
		}
	}
	return out
}

// workspaceNote tells an agent where its workspace is and what else it sees.
func workspaceNote(dir, view string, cps []workspace.ContextPath) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your workspace is %s. Relative paths in the file tools and commands are relative to it; "+
		"put the files of your answer there and mention them in your answer. It keeps your files across your turns.", dir)
	fmt.Fprintf(&b, "\nShared reference (read-only): %s holds the files of the current answers as they were when each was given, "+
		"one directory per answer under the same label as in the answers you are shown (%s/agent1, %s/agent2, …). "+
		"Read them to build on the others' work; copy what you need into your own workspace.", view, view, view)
	for _, cp := range cps {
		if cp.Write {
			fmt.Fprintf(&b, "\nContext path %s: read-only while agents coordinate; if your answer wins, you may write it "+
				"during the final presentation (protected paths excepted)", cp.Path)
			continue
		}
		fmt.Fprintf(&b, "\nContext path (read-only): %s", cp.Path)
	}
	return b.String()
}

// finish reports the winner's workspace and what it changed in context
// paths, and keeps both in the log directory: final/<winner>/workspace/
// and final/<winner>/context_changes.txt.
func (rw *runWorkspaces) finish(logDir, winner string) (ws string, changes []string, err error) {
	rw.applyIsolated(winner) // write_mode: the winner's changes reach the real paths now
	ws = rw.dirs[winner]
	if ws == "" {
		return "", nil, nil
	}
	changes = rw.contextChanges(winner)
	merr := rw.mergeMemory(winner) // before the copy, which the next turn carries
	if logDir == "" {
		return ws, changes, merr
	}
	_, err = rw.copyFinal(logDir, winner)
	err = cmp.Or(err, merr)
	if len(changes) > 0 {
		p := filepath.Join(logDir, "final", safeName(winner), "context_changes.txt")
		if werr := os.MkdirAll(filepath.Dir(p), 0o755); werr == nil {
			werr = os.WriteFile(p, []byte(strings.Join(changes, "\n")+"\n"), 0o644)
			err = cmp.Or(err, werr)
		}
	}
	return ws, changes, err
}

// copyFinal copies the winner's workspace to final/<winner>/workspace/ in
// the log directory: regular files and directories, not symbolic links.
func (rw *runWorkspaces) copyFinal(logDir, winner string) (string, error) {
	src, ok := rw.dirs[winner]
	if !ok || logDir == "" {
		return "", nil
	}
	dst := filepath.Join(logDir, "final", safeName(winner), "workspace")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	// As a snapshot is copied: walked by directory descriptors, no
	// symbolic link followed nor mount crossed, even one swapped in while
	// the copy runs.
	_, err := workspace.CopyTree(src, dst, workspace.Clone, maxFinalCopy)
	if errors.Is(err, workspace.ErrTooLarge) {
		err = fmt.Errorf("the workspace is larger than %d bytes; the copy in the logs is partial", maxFinalCopy)
	}
	return dst, err
}

// runName names a run's directories of workspaces, snapshots and views:
// its start time and a random suffix, so parallel runs never share one. A
// variable, so tests can know the paths before the run.
var runName = func(now time.Time) string { return now.Format("20060102_150405") + "_" + randomSuffix() }

func randomSuffix() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// safeName keeps an agent id usable as one path component.
func safeName(id string) string {
	if strings.Trim(id, ".") == "" {
		return "agent"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, strings.TrimLeft(id, "."))
}
