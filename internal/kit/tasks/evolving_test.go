package tasks

import (
	"strings"
	"testing"
)

// With evolving skills (auto_discover_custom_tools) the plan opens with
// writing the evolving skill and closes with updating it, around the
// memory tasks in upstream's order; they do not count toward the cap.
func TestEvolvingSkillTasksOpenAndCloseThePlan(t *testing.T) {
	pl := New(Options{Rules: Rules{MaxTasks: 1}, Framework: Framework{Evolving: true, Memory: true}})
	out := mustOK(t, pl, "create_task_plan", `{"tasks":[{"id":"x","description":"X"}]}`)
	got := ids(out["tasks"])
	want := []string{"create_evolving_skill", "prep_memory", "x", "update_evolving_skill", "save_memories", "write_verification_memo"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tasks %q, want %q", got, want)
	}
	p := pl.Snapshot()
	if d := p.Get("create_evolving_skill").Description; !strings.Contains(d, "tasks/evolving_skill/SKILL.md") {
		t.Errorf("create_evolving_skill: %q", d)
	}
	if d := p.Get("update_evolving_skill").Description; !strings.Contains(d, "## Learnings") {
		t.Errorf("update_evolving_skill: %q", d)
	}
	plain := New(Options{})
	if got := ids(mustOK(t, plain, "create_task_plan", `{"tasks":["A"]}`)["tasks"]); len(got) != 1 {
		t.Errorf("without evolving skills: %q", got)
	}
}
