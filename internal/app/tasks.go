package app

import (
	"crypto/sha256"
	"encoding/hex"
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
// verification memo) as learning_capture_mode allows. Agents that bring their
// own tool loop (CLI agents) get none, with a warning. agents is left as
// it is.
func (rw *runWorkspaces) withTaskPlanning(cfg *config.Config, agents []orchestrator.Agent) ([]orchestrator.Agent, error) {
	tp := cfg.Orchestrator.Tasks
	if !tp.Enabled {
		return agents, nil
	}
	out := slices.Clone(agents)
	for i := range out {
		a := &out[i]
		if a.Impl != nil {
			rw.warnings = append(rw.warnings, "agent "+a.ID+" brings its own tool loop (a CLI agent), so it gets no task planning tools")
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
		g := rw.guards[a.ID]
		if tp.Filesystem && g != nil {
			o.Files = g
		}
		pl := tasks.New(o)
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
		prev := a.BeforeRound
		a.BeforeRound = func() {
			if prev != nil {
				prev()
			}
			pl.Round()
		}
		a.SystemMessage = strings.TrimSpace(a.SystemMessage + tasks.Section(o.Files != nil, cfg.Orchestrator.Isolation.FastIteration))
	}
	return out, nil
}
