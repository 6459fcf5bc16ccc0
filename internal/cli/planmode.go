package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/kit/planmode"
	"github.com/massgen/massgen/internal/orchestrator"
)

// planMode says whether a plan or spec mode flag asks for one of
// runPlanMode's flows.
func (m *modeFlags) planMode() bool {
	return m.plan || m.planAndExecute || m.spec || m.executePlan != "" || m.executeSpec != ""
}

// checkPlan refuses plan flags that do not go together.
func (m *modeFlags) checkPlan() error {
	n := 0
	for _, on := range []bool{m.plan, m.planAndExecute, m.spec, m.executePlan != "", m.executeSpec != ""} {
		if on {
			n++
		}
	}
	if n > 1 {
		return usageErr("--plan, --plan-and-execute, --spec, --execute-plan and --execute-spec are one mode each: give one")
	}
	if !m.plan && !m.planAndExecute {
		for _, f := range []string{"plan-depth", "plan-thoroughness", "plan-steps"} {
			if m.fl != nil && m.fl.Changed(f) {
				return usageErr("--%s goes with --plan or --plan-and-execute", f)
			}
		}
	}
	if m.fl != nil && m.fl.Changed("plan-chunks") && !m.plan && !m.planAndExecute && !m.spec {
		return usageErr("--plan-chunks goes with --plan, --plan-and-execute or --spec")
	}
	if err := m.planOpts.Check(); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// runPlanMode is v0.1.73's plan and spec modes (internal/kit/planmode):
// --plan and --spec run the team on the question with the planning
// instructions before it and freeze the winner's project_plan.json or
// project_spec.json under .massgen/plans/; --execute-plan and
// --execute-spec run it on a stored one, each agent starting with it as
// its task plan (tasks/plan.json); --plan-and-execute does both. Progress
// is the plain display's; the answer printed is the last run's.
func runPlanMode(ctx context.Context, env *Env, rq app.Request, m *modeFlags, args []string, outputFile string) error {
	execute := m.executePlan != "" || m.executeSpec != ""
	switch {
	case len(args) > 1:
		return usageErr("one question at a time: quote it")
	case len(args) == 0 && !execute:
		return usageErr("no question given: plan and spec modes plan one question, as in massgen --plan \"Build a landing page\"")
	}
	question := ""
	if len(args) == 1 {
		question = args[0]
	}
	root := filepath.Join(env.WorkDir, ".massgen", "plans")
	var s *planmode.Session
	if execute {
		ref, want := m.executePlan, planmode.PlanKind
		if m.executeSpec != "" {
			ref, want = m.executeSpec, planmode.SpecKind
		}
		var err error
		if s, err = planmode.Resolve(root, ref); err != nil {
			return usageErr("%v", err)
		}
		if s.Meta.ArtifactType != want {
			return usageErr("%s holds a %s: use --execute-%s", s.Dir, s.Meta.ArtifactType, s.Meta.ArtifactType)
		}
	} else {
		kind, prefix := planmode.PlanKind, planmode.Prefix(m.planOpts)
		if m.spec {
			kind, prefix = planmode.SpecKind, planmode.SpecPrefix(m.planOpts.Chunks)
		}
		plan := rq
		plan.Question = prefix + question
		observe(env, &plan, false)
		out, err := app.Execute(ctx, env.app(), plan)
		if err != nil {
			return err
		}
		if out.Status != orchestrator.Completed {
			return finish(env, rq.Automation, "", out)
		}
		if out.Workspace == "" {
			return usageErr("%s mode needs agents with a workspace (a cwd in the config): the winner writes the %s there as a file", kind, kind)
		}
		if s, err = planmode.Freeze(root, out.Workspace, kind, question, out.LogDir, time.Now()); err != nil {
			return &exitError{code: ExitExecution, err: err}
		}
		if rq.Automation {
			fmt.Fprintf(env.Stdout, "PLAN_DIR: %s\n", s.Dir)
		} else {
			fmt.Fprintf(env.Stderr, "massgen: %s frozen in %s (%d items): run it with massgen --execute-%s %s\n",
				kind, s.Dir, s.Meta.Items, kind, s.Meta.PlanID)
		}
		if !m.planAndExecute {
			return finish(env, rq.Automation, outputFile, out)
		}
	}
	q, files, err := s.Execution(question)
	if err != nil {
		return &exitError{code: ExitExecution, err: err}
	}
	if err := s.SetStatus(planmode.Executing, ""); err != nil {
		return &exitError{code: ExitExecution, err: err}
	}
	exec := rq
	exec.Question, exec.WorkspaceFiles = q, files
	observe(env, &exec, false)
	out, err := app.Execute(ctx, env.app(), exec)
	status := planmode.Failed
	logDir := ""
	if err == nil {
		logDir = out.LogDir
		if out.Status == orchestrator.Completed {
			status = planmode.Completed
		}
	}
	if serr := s.SetStatus(status, logDir); serr != nil {
		fmt.Fprintf(env.Stderr, "warning: cannot record the plan's status in %s: %v\n", s.Dir, serr)
	}
	if err != nil {
		return err
	}
	return finish(env, rq.Automation, outputFile, out)
}
