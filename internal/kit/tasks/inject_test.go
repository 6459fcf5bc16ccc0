package tasks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Injected tasks (draft_approach's) go at the end of the agent's plan,
// need no verification, are marked injected, do not count against
// max_tasks_per_plan, and the verification memo moves after them; the
// plan is saved to tasks/plan.json through the Guard. An injection that
// fails leaves the plan as it was.
func TestInjectAddsDraftTasksAfterTheAgentsOwn(t *testing.T) {
	g, dir := guard(t)
	pl := New(Options{Rules: Rules{MaxTasks: 2, RequireVerification: true}, Framework: Framework{VerificationMemo: true}, Owner: "o", Files: g})
	mustOK(t, pl, "create_task_plan", `{"tasks": [{"description": "own 1", "verification": "v"}, {"description": "own 2", "verification": "v"}]}`)
	got, err := pl.Inject([]Spec{{Description: "vision"}, {Description: "[E1] cite", Verification: "E1 text", Metadata: map[string]any{"criterion_id": "E1"}}, {Description: "[E3] deepen"}})
	if err != nil || len(got) != 3 {
		t.Fatalf("inject: %v %v", got, err)
	}
	var plan Plan
	data, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, tk := range plan.Tasks {
		desc = append(desc, tk.Description)
	}
	if len(desc) != 6 || desc[0] != "own 1" || desc[2] != "vision" || desc[4] != "[E3] deepen" || plan.Tasks[5].ID[:len("write_verification_memo")] != "write_verification_memo" {
		t.Fatalf("plan order: %q", desc)
	}
	memo := plan.Tasks[5]
	if len(memo.Dependencies) != 5 {
		t.Errorf("the memo depends on %v, want every other task", memo.Dependencies)
	}
	if inj, _ := plan.Tasks[3].Metadata["injected"].(bool); !inj || plan.Tasks[3].Metadata["criterion_id"] != "E1" || plan.Tasks[3].Metadata["verification"] != "E1 text" {
		t.Errorf("injected task metadata: %v", plan.Tasks[3].Metadata)
	}
	// The agent's own limit (2) still holds for its own tasks only.
	if _, failed := call(t, pl, "add_task", `{"description": "own 3", "verification": "v"}`); !failed {
		t.Error("max_tasks_per_plan no longer counts the agent's own tasks")
	}
	before, _ := os.ReadFile(filepath.Join(dir, File))
	if _, err := pl.Inject([]Spec{{Description: "ok"}, {Description: " "}}); err == nil {
		t.Fatal("a task without a description was injected")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, File)); string(after) != string(before) || len(pl.Snapshot().Tasks) != 6 {
		t.Errorf("a failed injection changed the plan")
	}
}
