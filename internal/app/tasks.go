package app

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/memory"
	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/orchestrator"
)

// withTaskPlanning gives each agent of the run its own task plan when
// orchestrator.coordination.enable_agent_task_planning is on
// (internal/kit/tasks): the nine planning tools beside its own, in its
// rounds and its final presentation, the prompt section, and its plan
// cleared at the start of each round after the first. With
// task_planning_filesystem_mode the plan is also tasks/plan.json in the
// agent's workspace, written through its Guard. With filesystem memory
// the plan gets upstream's memory tasks (prep_memory, save_memories, the
// verification memo) as learning_capture_mode allows. A CLI agent gets the
// tools over MCP (clikit.go). agents is left as
// it is. files (Request.WorkspaceFiles) are laid in each workspace first;
// tasks/plan.json among them turns task planning on, in filesystem mode,
// and is each agent's plan at the start of every round.
func (rw *runWorkspaces) withTaskPlanning(cfg *config.Config, agents []orchestrator.Agent, files map[string][]byte) ([]orchestrator.Agent, error) {
	tp := cfg.Orchestrator.Tasks
	if files[tasks.File] != nil {
		tp.Enabled, tp.Filesystem = true, true
	}
	if !tp.Enabled && len(files) == 0 {
		return agents, nil
	}
	out := slices.Clone(agents)
	for i := range out {
		a := &out[i]
		if len(files) > 0 {
			if err := rw.lay(a.ID, files); err != nil {
				return nil, err
			}
		}
		if !tp.Enabled {
			continue
		}
		if a.Impl != nil && cliAgentOf(a) == nil {
			rw.warnings = append(rw.warnings, "agent "+a.ID+" brings its own tool loop, so it gets no task planning tools")
			continue
		}
		sum := sha256.Sum256([]byte(rw.dir + "\x00" + a.ID))
		o := tasks.Options{Rules: tasks.Rules{MaxTasks: tp.MaxTasks, RequireVerification: true},
			Owner: "planning_" + hex.EncodeToString(sum[:4])}
		if k := rw.kit; k != nil && k.memory {
			// As upstream's --memory-enabled and --verification-memory-enabled.
			o.Memory = k.mode == memory.Round
			o.VerificationMemo = k.mode == memory.VerificationAndFinal
		}
		o.Evolving = rw.evolving(cfg, a.ID) // auto_discover_custom_tools (codetools.go)
		g := rw.guards[a.ID]
		if tp.Filesystem && g != nil {
			o.Files, o.Initial = g, files[tasks.File]
		}
		pl := tasks.New(o)
		a.Checklist.Plan = draftPlanner{pl} // draft_approach lays its tasks here (checklist.go)
		if !addCLITools(a, pl.Tools()...) { // a CLI gets them over MCP (clikit.go)
			set, err := a.Tools.With(pl.Tools()...)
			if err != nil {
				return nil, usageErr("agent %s: %v", a.ID, err)
			}
			a.Tools = set
			if a.PresentTools != nil {
				if a.PresentTools, err = a.PresentTools.With(pl.Tools()...); err != nil {
					return nil, usageErr("agent %s: %v", a.ID, err)
				}
			}
		}
		prev := a.BeforeRound
		a.BeforeRound = func() {
			if prev != nil {
				prev()
			}
			pl.Round()
		}
		a.SystemMessage = strings.TrimSpace(a.SystemMessage + tasks.Section(o.Files != nil, cfg.Orchestrator.Isolation.FastIteration))
		a.SystemMessage += evolvingNote(o.Evolving)
	}
	return out, nil
}

// lay writes files in agent id's workspace through its Guard; an agent
// without one is told of in a warning.
func (rw *runWorkspaces) lay(id string, files map[string][]byte) error {
	g := rw.guards[id]
	if g == nil {
		rw.warnings = append(rw.warnings, "agent "+id+" has no workspace (cwd), so it does not get "+strings.Join(slices.Sorted(maps.Keys(files)), ", "))
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if _, _, err := g.WriteFile(name, files[name]); err != nil {
			return execErr("agent %s: cannot lay %s in its workspace: %v", id, name, err)
		}
	}
	return nil
}
