package attack

import (
	"path/filepath"
	"testing"
)

// Task planning in filesystem mode writes tasks/plan.json through the
// agent's Guard. A hostile agent makes tasks/ a link to a directory
// outside its workspace, or tasks/plan.json a link to a file outside,
// then has the planner write, rewrite and clear the plan (in the final
// presentation, after the links exist): every write is refused with why,
// and what the links point to is byte-for-byte the same.
func TestTaskPlanningEscapes(t *testing.T) {
	needBwrap(t)
	plan := map[string]any{"tasks": []any{map[string]any{"id": "a", "description": "A", "verification": "v"}}}
	for _, tcase := range []struct{ name, link, target, says string }{
		// The Guard refuses a write under a directory that leads out.
		{"tasks/ a link to a directory outside", "tasks", "", "could not be written"},
		// Its writes land in a new file renamed over the link: the link
		// goes, the plan is written in the workspace, the victim stays.
		{"tasks/plan.json a link to a file outside", "tasks/plan.json", "victim.json", `"had_existing_plan": true`},
	} {
		dir := tempDir(t)
		out := filepath.Join(dir, plantedDir)
		writeFiles(t, out, map[string]string{"victim.json": `{"keep": "me"}`, "notes.md": "mine"})
		target := filepath.Join(out, tcase.target)
		s := team{
			coord: []call{sh("mkdir -p tasks && rm -rf " + tcase.link + " && ln -s " + target + " " + tcase.link + " && ls -l tasks")},
			present: []call{
				tc("create_task_plan", plan),
			},
			presentSteps: [][]call{
				{tc("add_task", map[string]any{"description": "B", "verification": "v"})},
				{tc("update_task_status", map[string]any{"task_id": "a", "status": "completed"})},
				{tc("clear_task_plan", map[string]any{})},
			},
		}
		before := snap(t, out)
		r := kitTeam(t, dir, s, map[string]any{"enable_agent_task_planning": true, "task_planning_filesystem_mode": true})
		attempt(t, tcase.name, func(t *testing.T) {
			if r.code != 0 {
				t.Fatalf("the run failed: %s", r)
			}
			// The attack ran: the link was made, then the planner was
			// called and said what became of its writes.
			if len(grepTree(filepath.Join(dir, "logs"), "-> "+target)) == 0 {
				t.Errorf("the logs do not show the link to %s", target)
			}
			if len(grepTree(filepath.Join(dir, "logs"), tcase.says)) == 0 {
				t.Errorf("no tool result in the logs says %s", tcase.says)
			}
			unchanged(t, "the directory the link points to", out, before)
		})
	}
}
