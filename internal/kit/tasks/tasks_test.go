package tasks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// call runs the planner's tool name with args as a model would, returning
// the decoded result and whether it was an error.
func call(t *testing.T, pl *Planner, name, args string) (map[string]any, bool) {
	t.Helper()
	for _, tl := range pl.Tools() {
		if tl.Def().Name == name {
			res := tool.Invoke(context.Background(), tl, args, 0)
			var out map[string]any
			if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
				t.Fatalf("%s: result is not JSON: %v\n%s", name, err, res.Content)
			}
			if ok, _ := out["success"].(bool); ok == res.IsError || out["operation"] != name {
				t.Fatalf("%s: success %v with IsError %v, operation %v", name, out["success"], res.IsError, out["operation"])
			}
			return out, res.IsError
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, false
}

func mustOK(t *testing.T, pl *Planner, name, args string) map[string]any {
	t.Helper()
	out, failed := call(t, pl, name, args)
	if failed {
		t.Fatalf("%s %s: %v", name, args, out["error"])
	}
	return out
}

func ids(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

func guard(t *testing.T) (*workspace.Guard, string) {
	t.Helper()
	dir := t.TempDir()
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	return g, dir
}

func TestToolsAreUpstreamsNineWithTheirArguments(t *testing.T) {
	pl := New(Options{})
	var names []string
	for _, tl := range pl.Tools() {
		d := tl.Def()
		names = append(names, d.Name)
		if d.Description == "" || d.Parameters["type"] != "object" {
			t.Errorf("%s: description %q, schema %v", d.Name, d.Description, d.Parameters)
		}
	}
	if !slices.Equal(names, Names) {
		t.Errorf("tools %q, want %q", names, Names)
	}
	want := map[string][]string{"create_task_plan": {"tasks"}, "add_task": {"description"}, "update_task_status": {"task_id", "status"},
		"edit_task": {"task_id"}, "delete_task": {"task_id"}}
	for _, tl := range pl.Tools() {
		d := tl.Def()
		req, _ := d.Parameters["required"].([]string)
		if !slices.Equal(req, want[d.Name]) {
			t.Errorf("%s requires %q, want %q", d.Name, req, want[d.Name])
		}
	}
	props := pl.Tools()[1].Def().Parameters["properties"].(map[string]any)
	for _, p := range []string{"description", "after_task_id", "depends_on", "priority", "verification", "verification_method", "execution"} {
		if props[p] == nil {
			t.Errorf("add_task has no %s", p)
		}
	}
}

func TestCreateTaskPlanRefusesBadPlansAndKeepsNone(t *testing.T) {
	v := `"verification":"ok"`
	for _, tc := range []struct{ name, tasks, want string }{
		{"unknown id", `[{"id":"a","description":"A",` + v + `,"depends_on":["zz"]}]`, "Dependency zz not found"},
		{"later index", `[{"description":"A",` + v + `,"depends_on":[1]},{"description":"B",` + v + `}]`, "must reference earlier tasks"},
		{"index out of range", `[{"description":"A",` + v + `,"depends_on":[5]}]`, "Invalid dependency index 5"},
		{"later id (a cycle in waiting)", `[{"id":"a","description":"A",` + v + `,"depends_on":["b"]},{"id":"b","description":"B",` + v + `,"depends_on":["a"]}]`, "must reference earlier tasks"},
		{"self", `[{"id":"a","description":"A",` + v + `,"depends_on":["a"]}]`, "Self-dependency"},
		{"duplicate id", `[{"id":"a","description":"A",` + v + `},{"id":"a","description":"B",` + v + `}]`, "already exists"},
		{"no verification", `[{"id":"a","description":"Alpha"}]`, "missing required 'verification'"},
		{"bad priority", `[{"id":"a","description":"A",` + v + `,"priority":"urgent"}]`, "Invalid priority"},
		{"over max_tasks_per_plan", `[{"description":"A",` + v + `},{"description":"B",` + v + `},{"description":"C",` + v + `}]`, "max_tasks_per_plan (2)"},
		{"empty", `[]`, "at least one task"},
		{"bad execution", `[{"description":"A",` + v + `,"execution":{"mode":"delegate"}}]`, "requires subagent_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, dir := guard(t)
			pl := New(Options{Rules: Rules{MaxTasks: 2, RequireVerification: true}, Files: g, Owner: "tok"})
			out, failed := call(t, pl, "create_task_plan", `{"tasks":`+tc.tasks+`}`)
			if !failed || !strings.Contains(out["error"].(string), tc.want) {
				t.Fatalf("create_task_plan: failed %v, error %v; want it to say %q", failed, out["error"], tc.want)
			}
			if got := mustOK(t, pl, "get_task_plan", `{}`)["summary"].(map[string]any)["total_tasks"]; got != 0.0 {
				t.Errorf("a refused plan left %v tasks", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "tasks")); !os.IsNotExist(err) {
				t.Errorf("a refused plan touched the workspace: %v", err)
			}
		})
	}
}

func TestDependenciesGateReadinessThroughTheStatusFlow(t *testing.T) {
	pl := New(Options{Rules: Rules{RequireVerification: true}})
	out := mustOK(t, pl, "create_task_plan", `{"tasks":[
		{"id":"research","description":"Research","verification":"table of 3","verification_method":"read it"},
		{"id":"design","description":"Design","depends_on":[0],"verification":"diagram"},
		{"description":"Write it up","verification":"a page"},
		{"id":"ship","description":"Ship","depends_on":["research","design"],"priority":"high","verification":"live"}]}`)
	if got := ids(out["tasks"]); len(got) != 4 || got[0] != "research" || got[3] != "ship" || !strings.HasPrefix(got[2], "task_2_") {
		t.Fatalf("tasks %q", got)
	}
	// A bare description is a task too; without verification it is
	// refused when verification is required.
	if out, failed := call(t, New(Options{Rules: Rules{RequireVerification: true}}), "create_task_plan", `{"tasks":["just do it"]}`); !failed {
		t.Errorf("a bare description passed required verification: %v", out)
	}
	if again, failed := call(t, pl, "create_task_plan", `{"tasks":[{"description":"X","verification":"y"}]}`); !failed ||
		!strings.Contains(again["error"].(string), "A task plan already exists with 4 tasks") {
		t.Errorf("second create_task_plan: %v", again)
	}
	if got := ids(mustOK(t, pl, "get_ready_tasks", `{}`)["ready_tasks"]); len(got) != 2 || got[0] != "research" {
		t.Errorf("ready %q, want research and the write-up", got)
	}
	bl := mustOK(t, pl, "get_blocked_tasks", `{}`)["blocked_tasks"].([]any)
	if len(bl) != 2 || bl[1].(map[string]any)["id"] != "ship" || len(bl[1].(map[string]any)["blocking_task_ids"].([]any)) != 2 {
		t.Errorf("blocked %v", bl)
	}
	mustOK(t, pl, "update_task_status", `{"task_id":"research","status":"in_progress"}`)
	done := mustOK(t, pl, "update_task_status", `{"task_id":"research","status":"completed","completion_notes":"compared 3"}`)
	if got := ids(done["newly_ready_tasks"]); !slices.Equal(got, []string{"design"}) || done["verification_pending"] != true ||
		done["verification"] != "table of 3" || done["verification_method"] != "read it" || done["unverified_count"] != 1.0 {
		t.Errorf("completing research: %v", done)
	}
	mustOK(t, pl, "update_task_status", `{"task_id":"research","status":"verified","completion_notes":"checked"}`)
	done = mustOK(t, pl, "update_task_status", `{"task_id":"design","status":"completed"}`)
	if got := ids(done["newly_ready_tasks"]); !slices.Equal(got, []string{"ship"}) {
		t.Errorf("completing design readied %q, want ship", got)
	}
	if out, failed := call(t, pl, "update_task_status", `{"task_id":"ship","status":"done"}`); !failed || !strings.Contains(out["error"].(string), "Invalid status") {
		t.Errorf("status done: %v", out)
	}
	if out, failed := call(t, pl, "update_task_status", `{"task_id":"nope","status":"completed"}`); !failed || !strings.Contains(out["error"].(string), "Task not found: nope") {
		t.Errorf("unknown task: %v", out)
	}
	sum := mustOK(t, pl, "get_task_plan", `{}`)
	s := sum["summary"].(map[string]any)
	if s["total_tasks"] != 4.0 || s["verified_tasks"] != 1.0 || s["completed_tasks"] != 1.0 || s["ready_tasks"] != 2.0 || s["awaiting_verification"] != 1.0 {
		t.Errorf("summary %v", s)
	}
	p := pl.Snapshot()
	if r := p.Get("research"); r.VerifiedAt == nil || r.CompletedAt == nil || r.Metadata["completion_notes"] != "compared 3" || r.Metadata["verification_notes"] != "checked" {
		t.Errorf("research %+v", r)
	}
}

func TestAddEditDeleteKeepDependenciesWhole(t *testing.T) {
	pl := New(Options{Rules: Rules{MaxTasks: 3}})
	mustOK(t, pl, "create_task_plan", `{"tasks":[{"id":"a","description":"A"},{"id":"b","description":"B","depends_on":["a"]}]}`)
	if out, failed := call(t, pl, "add_task", `{"description":"C","depends_on":["ghost"]}`); !failed || !strings.Contains(out["error"].(string), "Dependency task does not exist: ghost") {
		t.Errorf("add with unknown dependency: %v", out)
	}
	if out, failed := call(t, pl, "add_task", `{"description":"C","after_task_id":"ghost"}`); !failed || !strings.Contains(out["error"].(string), "after_task_id not found") {
		t.Errorf("add after unknown task: %v", out)
	}
	c := mustOK(t, pl, "add_task", `{"description":"C","after_task_id":"a","depends_on":["a"],"priority":"high"}`)["task"].(map[string]any)
	if got := ids(mustOK(t, pl, "get_task_plan", `{}`)["plan"].(map[string]any)["tasks"]); len(got) != 3 || got[1] != c["id"] {
		t.Errorf("order %q: C not after a", got)
	}
	if out, failed := call(t, pl, "add_task", `{"description":"D"}`); !failed || !strings.Contains(out["error"].(string), "max_tasks_per_plan") {
		t.Errorf("a fourth task under max_tasks_per_plan 3: %v", out)
	}
	if out, failed := call(t, pl, "delete_task", `{"task_id":"a"}`); !failed || !strings.Contains(out["error"].(string), "depends on it") {
		t.Errorf("deleting a depended-on task: %v", out)
	}
	mustOK(t, pl, "edit_task", `{"task_id":"b","description":"B, better"}`)
	mustOK(t, pl, "delete_task", `{"task_id":"b"}`)
	mustOK(t, pl, "add_task", `{"description":"D"}`) // room again
	if got := pl.Snapshot(); len(got.Tasks) != 3 || got.Get("b") != nil {
		t.Errorf("after delete and add: %+v", got.Tasks)
	}
	cl := mustOK(t, pl, "clear_task_plan", `{}`)
	if cl["had_existing_plan"] != true || pl.Snapshot() != nil {
		t.Errorf("clear: %v, plan %+v", cl, pl.Snapshot())
	}
	mustOK(t, pl, "create_task_plan", `{"tasks":[{"description":"fresh"}]}`)
}

func TestMemoryTasksSurroundThePlanAndDoNotCountTowardTheCap(t *testing.T) {
	pl := New(Options{Rules: Rules{MaxTasks: 2, RequireVerification: true}, Framework: Framework{Memory: true}})
	out := mustOK(t, pl, "create_task_plan", `{"tasks":[{"id":"x","description":"X","verification":"v"},{"description":"Y","depends_on":[0],"verification":"v"}]}`)
	got := ids(out["tasks"])
	if len(got) != 5 || got[0] != "prep_memory" || got[1] != "x" || got[3] != "save_memories" || got[4] != "write_verification_memo" {
		t.Fatalf("tasks %q", got)
	}
	p := pl.Snapshot()
	// [0] is the agent's first task, not the prepended prep_memory.
	if y := p.Tasks[2]; !slices.Equal(y.Dependencies, []string{"x"}) {
		t.Errorf("Y depends on %q, want x", y.Dependencies)
	}
	if m := p.Tasks[4]; len(m.Dependencies) != 4 || m.Metadata["type"] != "verification_replay_capture" {
		t.Errorf("memo %+v", m)
	}
	if out, failed := call(t, pl, "add_task", `{"description":"Z","verification":"v"}`); !failed {
		t.Errorf("a third own task under a cap of 2: %v", out)
	}
	memo := New(Options{Framework: Framework{VerificationMemo: true}})
	if got := ids(mustOK(t, memo, "create_task_plan", `{"tasks":["A"]}`)["tasks"]); len(got) != 2 || got[1] != "write_verification_memo" {
		t.Errorf("verification memo only: %q", got)
	}
}

func TestFilesystemModeKeepsThePlanInTheWorkspace(t *testing.T) {
	g, dir := guard(t)
	pl := New(Options{Rules: Rules{RequireVerification: true}, Files: g, Owner: "planning_3f9a"})
	pl.Round() // the first round keeps what is there (nothing)
	mustOK(t, pl, "create_task_plan", `{"tasks":[{"id":"a","description":"A","verification":"v"},{"id":"b","description":"B","depends_on":["a"],"verification":"v"}]}`)
	mustOK(t, pl, "update_task_status", `{"task_id":"a","status":"completed"}`)
	data, err := os.ReadFile(filepath.Join(dir, "tasks", "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Plan
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk.AgentID != "planning_3f9a" || len(onDisk.Tasks) != 2 || onDisk.Tasks[0].Status != Completed || onDisk.Tasks[1].Dependencies[0] != "a" {
		t.Errorf("plan.json: %s", data)
	}
	// Another planner over the same workspace reads it back.
	again := New(Options{Files: g, Owner: "planning_3f9a"})
	if got := again.Snapshot(); got != nil {
		t.Errorf("read before any call: %+v", got)
	}
	if s := mustOK(t, again, "get_task_plan", `{}`)["summary"].(map[string]any); s["total_tasks"] != 2.0 || s["ready_tasks"] != 1.0 {
		t.Errorf("read back: %v", s)
	}
	pl.Round() // a new round: no plan, no file
	if pl.Snapshot() != nil {
		t.Error("the plan outlived the round")
	}
	if _, err := os.Stat(filepath.Join(dir, "tasks", "plan.json")); !os.IsNotExist(err) {
		t.Errorf("plan.json outlived the round: %v", err)
	}
	mustOK(t, pl, "create_task_plan", `{"tasks":[{"description":"round 2","verification":"v"}]}`)
}

// A plan laid in the workspace before the run in upstream's short form
// ({"tasks": [...]}, as plan-and-execute writes it) is the agent's plan.
func TestAShortPlanOnDiskIsRead(t *testing.T) {
	g, dir := guard(t)
	must(t, os.MkdirAll(filepath.Join(dir, "tasks"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tasks", "plan.json"), []byte(`{"tasks":["scaffold",{"id":"api","description":"API","depends_on":[0]}]}`), 0o644))
	pl := New(Options{Files: g, Rules: Rules{RequireVerification: true}})
	got := mustOK(t, pl, "get_ready_tasks", `{}`)
	if got["count"] != 1.0 {
		t.Errorf("ready %v", got)
	}
	if b := ids(mustOK(t, pl, "get_blocked_tasks", `{}`)["blocked_tasks"]); !slices.Equal(b, []string{"api"}) {
		t.Errorf("blocked %q", b)
	}
	// One with a dependency cycle is not.
	must(t, os.WriteFile(filepath.Join(dir, "tasks", "plan.json"), []byte(`{"agent_id":"x","created_at":"2026-01-01T00:00:00","updated_at":"2026-01-01T00:00:00",
		"tasks":[{"id":"a","description":"A","status":"pending","dependencies":["b"]},{"id":"b","description":"B","status":"pending","dependencies":["a"]}]}`), 0o644))
	if _, err := New(Options{Files: g}).read(); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a plan with a cycle: %v", err)
	}
}

// tasks/ made a link out of the workspace: the Guard refuses the write,
// the call says so, and nothing outside changes.
func TestFilesystemModeWritesOnlyThroughTheGuard(t *testing.T) {
	g, dir := guard(t)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("mine"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(dir, "tasks")))
	before := wstest.Snapshot(t, outside)
	pl := New(Options{Files: g})
	out, failed := call(t, pl, "create_task_plan", `{"tasks":["A"]}`)
	if !failed || !strings.Contains(out["error"].(string), "could not be written") {
		t.Errorf("create through a link out: %v", out)
	}
	call(t, pl, "clear_task_plan", `{}`)
	wstest.Unchanged(t, outside, before)
	if _, err := os.Stat(filepath.Join(outside, "plan.json")); !os.IsNotExist(err) {
		t.Errorf("plan.json written outside: %v", err)
	}
}

func TestSectionNamesTheToolsAndTheFile(t *testing.T) {
	s := Section(true, false)
	for _, n := range Names[:len(Names)-1] {
		if !strings.Contains(s, n) {
			t.Errorf("section does not name %s", n)
		}
	}
	if !strings.Contains(s, "tasks/plan.json") || strings.Contains(Section(false, false), "tasks/plan.json") {
		t.Error("the filesystem note belongs to filesystem mode alone")
	}
	if !strings.Contains(Section(false, true), "final quick") || !strings.Contains(s, "final comprehensive") {
		t.Error("fast iteration asks for a quick pass")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An execution run's plan (Initial) is where each new round starts again,
// whatever the last round did to it.
func TestEachRoundStartsFromTheInitialPlan(t *testing.T) {
	g, dir := guard(t)
	initial := []byte(`{"tasks":[{"id":"a","description":"A"},{"id":"b","description":"B","depends_on":["a"]}]}`)
	_, _, err := g.WriteFile(File, initial)
	must(t, err)
	pl := New(Options{Files: g, Initial: initial})
	pl.Round()
	mustOK(t, pl, "update_task_status", `{"task_id":"a","status":"completed"}`)
	mustOK(t, pl, "delete_task", `{"task_id":"b"}`)
	pl.Round()
	if data, _ := os.ReadFile(filepath.Join(dir, "tasks", "plan.json")); string(data) != string(initial) {
		t.Errorf("plan.json in the new round: %s", data)
	}
	if got := ids(mustOK(t, pl, "get_ready_tasks", `{}`)["ready_tasks"]); !slices.Equal(got, []string{"a"}) {
		t.Errorf("ready in the new round: %q", got)
	}
}
