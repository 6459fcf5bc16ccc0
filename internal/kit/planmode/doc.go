// Package planmode is v0.1.73's plan and spec modes of the command line
// (--plan, --plan-and-execute, --execute-plan, --spec, --execute-spec): a
// planning run whose agents write project_plan.json (or project_spec.json,
// requirements in EARS notation) in their workspace instead of doing the
// work; the winner's artifact frozen under .massgen/plans/plan_<id>/; and an
// execution run that starts each agent with the frozen plan as
// tasks/plan.json (its task plan, internal/kit/tasks) and the original
// question.
//
// Prefix and SpecPrefix are the planning instructions put before the
// question; Freeze, Resolve and Session keep the plans; Execution is the
// execution run's question and the files it lays in each workspace. The
// files of an agent's workspace are read without following links, regular
// files only and bounded (internal/kit/kitfile); the files of an execution
// run are laid by the caller through each agent's Guard.
//
// It imports kitfile and nothing of the orchestrator, app or cli.
package planmode
