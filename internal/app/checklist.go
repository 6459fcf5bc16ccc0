package app

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/orchestrator"
)

// withChecklistFiles gives each agent with a workspace its Guard as the
// files submit_checklist reads the diagnostic report through (checklist-
// gated voting's report gate; an agent without one has nowhere to write a
// report, and the gate passes it), a CLI agent through its workflow
// server. agents is left as it is.
func (rw *runWorkspaces) withChecklistFiles(agents []orchestrator.Agent) []orchestrator.Agent {
	out := make([]orchestrator.Agent, len(agents))
	copy(out, agents)
	for i := range out {
		if g := rw.guards[out[i].ID]; g != nil {
			out[i].Checklist.Files = g
		}
		if ca := cliAgentOf(&out[i]); ca != nil {
			ca.Checklist = out[i].Checklist // a CLI gets them over MCP
		}
	}
	return out
}

// draftPlanner lays a valid draft_approach's tasks in the agent's task
// plan (internal/kit/tasks), as upstream's planning server takes them from
// inject_tasks.json.
type draftPlanner struct{ pl *tasks.Planner }

func (d draftPlanner) InjectDraft(plan []coord.DraftTask) (int, error) {
	ids, err := d.pl.Inject(draftSpecs(plan))
	return len(ids), err
}

// draftSpecs are a draft's tasks as upstream's
// _convert_task_plan_to_inject_format writes them: the vision as it is,
// each improvement as "[E2] plan" verified by its criterion, the preserved
// strengths as one regression check; every task inline and high priority.
func draftSpecs(plan []coord.DraftTask) []tasks.Spec {
	inline := map[string]any{"mode": "inline"}
	var out []tasks.Spec
	for _, t := range plan {
		switch t.Type {
		case "vision":
			out = append(out, tasks.Spec{Description: t.Description, Priority: "high", Execution: inline,
				Metadata: map[string]any{"type": "vision"}})
		case "improve":
			sources := make([]any, len(t.Sources))
			for i, s := range t.Sources {
				sources[i] = s
			}
			out = append(out, tasks.Spec{Description: fmt.Sprintf("[%s] %s", t.CriterionID, t.Plan), Verification: t.Criterion,
				Priority: "high", Execution: inline, Metadata: map[string]any{"type": "improve", "criterion_id": t.CriterionID,
					"criterion": t.Criterion, "impact": t.Impact, "sources": sources}})
		case "verify_preserve":
			bullets := make([]string, len(t.Items))
			items := make([]any, len(t.Items))
			for i, p := range t.Items {
				bullets[i] = fmt.Sprintf("[%s] %s (%s)", p.CriterionID, p.What, p.Source)
				items[i] = map[string]any{"criterion_id": p.CriterionID, "what": p.What, "source": p.Source}
			}
			out = append(out, tasks.Spec{
				Description: "Before submitting: verify preserved strengths haven't regressed — " + strings.Join(bullets, "; ") + ". " +
					"Confirm each preserved item is present in the actual output (run/render/screenshot, not just checking the code), " +
					"confirm preserved strengths remain intact, and make sure earlier correctness fixes still pass after later changes. " +
					"Passing criteria scores also must not drop.",
				Verification: "All preserved elements verified in actual output (run/render/screenshot as appropriate), not just present " +
					"in source files; preserved strengths intact; earlier correctness fixes still pass after later changes; passing " +
					"criteria scores confirmed not dropped",
				Priority: "high", Execution: inline, Metadata: map[string]any{"type": "verify_preserve", "items": items}})
		}
	}
	return out
}
