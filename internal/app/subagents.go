package app

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/subagent"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

// runSubagents are the subagent managers of one run's agents
// (coordination.enable_subagents), and the log directory they put their
// children's logs under once the run's logs are open.
type runSubagents struct {
	mu       sync.Mutex
	logDir   string
	managers map[string]*subagent.Manager
}

func (s *runSubagents) setLogDir(dir string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logDir = dir
}

func (s *runSubagents) getLogDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logDir
}

// close ends every agent's children (the run is over) and adds to res
// what they spent after the run had built its result.
func (s *runSubagents) close(res *orchestrator.Result) {
	if s == nil {
		return
	}
	for id, m := range s.managers {
		u, c := m.Close()
		if res == nil || u.Total() == 0 && c == 0 {
			continue
		}
		if res.Usage == nil {
			res.Usage, res.Cost = map[string]llm.Usage{}, map[string]float64{}
		}
		total := res.Usage[id]
		total.Add(u)
		res.Usage[id] = total
		res.Cost[id] += c
	}
}

// withSubagents gives the agents of a run what subagents need. In a child
// run (ctx carries a subagent.Inbox) each agent's tools deliver the
// parent's runtime messages. With enable_subagents, each agent with a
// workspace gets the subagent tools (a CLI agent over MCP: clikit.go) and
// a note on them in its system message; an agent without a workspace has
// no CONTEXT.md to give and nowhere to keep children, so it gets none (a
// warning says so).
func withSubagents(ctx context.Context, env *Env, getenv func(string) string, cfg *config.Config,
	agents []orchestrator.Agent, wss *runWorkspaces) ([]orchestrator.Agent, *runSubagents, []string, error) {
	sc := cfg.Orchestrator.Subagents
	in := subagent.InboxOf(ctx)
	if in == nil && !sc.Enabled {
		return agents, nil, nil, nil
	}
	out := slices.Clone(agents) // a team may be shared by concurrent runs
	if in != nil {
		for i := range out {
			id := out[i].ID
			deliver := func(t tool.Tool) tool.Tool { return subagent.Deliver(t, id, in) }
			if mapCLITools(&out[i], deliver) { // the tools its CLI is served (clikit.go)
				continue
			}
			if out[i].Tools.Len() > 0 || out[i].Tools.Pending() {
				out[i].Tools = out[i].Tools.Map(deliver)
			}
		}
	}
	if !sc.Enabled {
		return out, nil, nil, nil
	}
	types, missing, err := subagent.LoadTypes(filepath.Join(env.WorkDir, subagent.ProjectTypesDir), sc.Types)
	if err != nil {
		return nil, nil, nil, usageErr("subagent types: %v", err)
	}
	var warnings []string
	for _, name := range missing {
		warnings = append(warnings, fmt.Sprintf("subagent type %q is not found (built in, or in %s)", name, subagent.ProjectTypesDir))
	}
	set := subagent.Settings{DefaultTimeout: seconds(sc.DefaultTimeout), MinTimeout: seconds(sc.MinTimeout),
		MaxTimeout: seconds(sc.MaxTimeout), MaxConcurrent: sc.MaxConcurrent, Types: types}
	subs := &runSubagents{managers: map[string]*subagent.Manager{}}
	for i := range out {
		a := &out[i]
		ws, g := wss.dirs[a.ID], wss.guards[a.ID]
		if a.Impl != nil && cliAgentOf(a) == nil || ws == "" || g == nil {
			warnings = append(warnings, fmt.Sprintf("agent %s gets no subagent tools: they need an agent with a workspace (cwd)", a.ID))
			continue
		}
		view := ""
		if wss.snaps != nil {
			view = wss.snaps.viewDir(a.ID)
		}
		parent := subagent.Parent{Agent: a.ID, Workspace: ws, View: view, LogDir: subs.getLogDir,
			CanRead: func(p string) (string, error) {
				if err := g.Check("share with a subagent", p, workspace.Read); err != nil {
					return "", err
				}
				return filepath.EvalSymlinks(p)
			}}
		m := subagent.New(ctx, set, parent, &childRunner{getenv: getenv, now: env.Now, parent: configAgent(cfg, a.ID), team: sc.Agents})
		subs.managers[a.ID] = m
		if addCLITools(a, m.Tools()...) { // over MCP (clikit.go)
			mapCLITools(a, m.WithNotices)
		} else {
			tools, err := a.Tools.With(m.Tools()...)
			if err != nil {
				subs.close(nil)
				return nil, nil, nil, usageErr("agent %s: %v", a.ID, err)
			}
			a.Tools = tools.Map(m.WithNotices)
		}
		a.SystemMessage = strings.TrimSpace(a.SystemMessage + "\n\n" + subagentNote(set.WithDefaults(), types))
	}
	return out, subs, warnings, nil
}

// subagentNote is the system message's section on subagents.
func subagentNote(s subagent.Settings, types []subagent.Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Subagents\nYou can delegate independent pieces of work to subagents (spawn_subagents, at most %d at once; "+
		"each has %d seconds). Write CONTEXT.md in your workspace first (the project and its goal). Subagents read your workspace and "+
		"write only their own, whose path their result gives. Use background: true for long work and carry on meanwhile; "+
		"list_subagents, continue_subagent, send_message_to_subagent and cancel_subagent manage them.",
		s.MaxConcurrent, int(s.DefaultTimeout.Seconds()))
	if len(types) > 0 {
		b.WriteString("\nSpecialised types (subagent_type):")
		for _, t := range types {
			fmt.Fprintf(&b, "\n- %s: %s", t.Name, t.Description)
		}
	}
	return b.String()
}

// childRunner runs a subagent as a whole massgen run in this process
// (Execute): its team is subagent_orchestrator's agents, or the spawning
// agent's backend; each agent works in a workspace under the child's
// directory, inside the parent's workspace, with the parent's workspace
// and the shared paths read-only — the Guard and the sandbox hold it
// there as they hold every agent.
type childRunner struct {
	getenv func(string) string
	now    func() time.Time
	parent config.Agent
	team   []config.Agent
}

func (c *childRunner) Run(ctx context.Context, s subagent.Spec) subagent.Report {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return subagent.Report{Err: err}
	}
	agents := childTeam(c.team, c.parent, s.System)
	var ro []config.ContextPath
	for _, p := range s.ReadOnly {
		ro = append(ro, config.ContextPath{Path: p, Permission: "read"})
	}
	var stderr bytes.Buffer
	env := &Env{Getenv: c.getenv, Stderr: &stderr, Now: c.now, WorkDir: s.Dir, DotEnvLoaded: true}
	rq := Request{
		Question: s.Task,
		Team:     Team{Agents: agents},
		Overrides: Overrides{
			Quick:   !s.Refine,
			Timeout: s.Timeout.Seconds(),
		},
		Files: Files{ContextPaths: ro},
		Logging: Logging{
			LogDir:     s.LogDir,
			NoLogs:     s.LogDir == "",
			Automation: s.LogDir != "",
		},
	}
	out, err := Execute(subagent.WithInbox(ctx, s.Inbox), env, rq)
	if w := stderr.Bytes(); len(bytes.TrimSpace(w)) > 0 && s.LogDir != "" {
		// Its warnings, kept with its logs.
		_ = os.WriteFile(filepath.Join(s.LogDir, "stderr.txt"), w, 0o644)
	}
	if err != nil {
		return subagent.Report{Err: err}
	}
	rep := subagent.Report{Answer: out.Final, Workspace: out.Workspace, LogDir: out.LogDir,
		Usage: out.TotalUsage(), CostUSD: out.TotalCost(), TimedOut: out.Deadline}
	if out.Status != orchestrator.Completed {
		rep.Err = cmp.Or(out.Err, fmt.Errorf("the subagent's run ended %s", out.Status))
	}
	return rep
}

// childTeam is a child's team: team, or the spawning agent's own backend.
// Each agent works in a workspace of its own; the context paths its
// backend names are read-only to it, whatever they are to the parent (a
// child writes only its own workspace, as upstream mounts everything else
// read-only).
func childTeam(team []config.Agent, parent config.Agent, system string) []config.Agent {
	if len(team) == 0 {
		a := parent
		a.ID = "agent"
		team = []config.Agent{a}
	}
	agents := make([]config.Agent, len(team))
	for i, a := range team {
		a.Backend.Cwd = "workspace"
		a.SystemMessage = strings.TrimSpace(system + "\n\n" + a.SystemMessage)
		cps := make([]config.ContextPath, len(a.Backend.ContextPaths))
		for j, cp := range a.Backend.ContextPaths {
			cp.Permission = "read"
			cps[j] = cp
		}
		a.Backend.ContextPaths = cps
		agents[i] = a
	}
	return agents
}
