package planmode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

const plan = `{"tasks": [
  {"id": "F002", "chunk": "C01", "description": "Page", "depends_on": ["F001"], "priority": "high", "metadata": {"verification": "renders", "verification_group": "ui"}},
  {"id": "F001", "chunk": "C01", "description": "Scaffold", "priority": "urgent", "metadata": {"verification": "builds"}}
]}`

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A plan the winner wrote is frozen, found again by id, directory and
// latest, and laid as a task plan the planning tools read, each task after
// its dependencies.
func TestAFrozenPlanBecomesTheExecutorsTaskPlan(t *testing.T) {
	ws, root := t.TempDir(), filepath.Join(t.TempDir(), "plans")
	write(t, filepath.Join(ws, "project_plan.json"), plan)
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	s, err := Freeze(root, ws, PlanKind, "Build a site", "/logs/x", now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.Status != Ready || s.Meta.Items != 2 || filepath.Base(s.Dir) != "plan_20260102_030405_000006" {
		t.Errorf("session %+v", s)
	}
	if _, err := Freeze(root, ws, PlanKind, "again", "", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"20260102_030405_000006", "plan_20260102_030405_000006", s.Dir} {
		if got, err := Resolve(root, ref); err != nil || got.Meta.Question != "Build a site" {
			t.Errorf("Resolve(%s) = %+v, %v", ref, got, err)
		}
	}
	if got, err := Resolve(root, "latest"); err != nil || got.Meta.Question != "again" {
		t.Errorf("latest: %+v, %v", got, err)
	}
	q, files, err := s.Execution("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "PLAN EXECUTION MODE") || !strings.HasSuffix(q, "Build a site") {
		t.Errorf("question %q", q)
	}
	must(t, s.SetStatus(Executing, "/logs/y"))
	if got, _ := Resolve(root, s.Dir); got.Meta.Status != Executing || got.Meta.ExecutionLogDir != "/logs/y" {
		t.Errorf("status %+v", got.Meta)
	}
	// The executor's workspace, its plan read through its Guard.
	exec := t.TempDir()
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: exec})
	must(t, err)
	for name, data := range files {
		_, _, err := g.WriteFile(name, data)
		must(t, err)
	}
	pl := tasks.New(tasks.Options{Files: g, Rules: tasks.Rules{RequireVerification: true}})
	var ready tool.Tool
	for _, tl := range pl.Tools() {
		if tl.Def().Name == "get_ready_tasks" {
			ready = tl
		}
	}
	res := tool.Invoke(context.Background(), ready, "{}", 0)
	var out struct {
		ReadyTasks []tasks.Task `json:"ready_tasks"`
	}
	must(t, json.Unmarshal([]byte(res.Content), &out))
	if len(out.ReadyTasks) != 1 || out.ReadyTasks[0].ID != "F001" || out.ReadyTasks[0].Priority != "medium" || out.ReadyTasks[0].Metadata["verification"] != "builds" {
		t.Fatalf("ready: %s", res.Content)
	}
	p := pl.Snapshot()
	if p == nil || len(p.Tasks) != 2 || p.Tasks[1].ID != "F002" || p.Tasks[1].Metadata["verification_group"] != "ui" || p.Tasks[1].Metadata["chunk"] != "C01" {
		t.Errorf("plan %+v", p)
	}
}

func TestASpecsRequirementsBecomeTasks(t *testing.T) {
	ws, root := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "project_spec.json"), `{"requirements": [{"id": "REQ-001", "chunk": "C01", "title": "Login", "priority": "P0",
		"ears": "WHEN a user submits valid credentials THE SYSTEM SHALL sign them in", "verification": "log in"}]}`)
	s, err := Freeze(root, ws, SpecKind, "auth", "", time.Now())
	must(t, err)
	q, files, err := s.Execution("add auth")
	must(t, err)
	if !strings.Contains(q, "SPEC EXECUTION MODE") || files["tasks/spec.json"] == nil {
		t.Errorf("question %q, files %v", q, len(files))
	}
	var p struct{ Tasks []map[string]any }
	must(t, json.Unmarshal(files["tasks/plan.json"], &p))
	if len(p.Tasks) != 1 || p.Tasks[0]["priority"] != "high" || !strings.HasPrefix(p.Tasks[0]["description"].(string), "Login: WHEN a user") {
		t.Errorf("tasks %v", p.Tasks)
	}
}

// What a planning run can get wrong is refused with why, and nothing is
// stored; a link in the workspace is not followed.
func TestFreezeRefusesWhatIsNotAPlan(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.json"), plan)
	for _, tc := range []struct{ name, body, want string }{
		{"none", "", "wrote no project_plan.json"},
		{"not json", "plan: yes", "not a JSON object"},
		{"no tasks", `{"tasks": []}`, `no "tasks" list`},
		{"unknown dependency", `{"tasks": [{"id": "a", "description": "A", "depends_on": ["zz"]}]}`, "depends on zz"},
		{"cycle", `{"tasks": [{"id": "a", "description": "A", "depends_on": ["b"]}, {"id": "b", "description": "B", "depends_on": ["a"]}]}`, "dependency cycle"},
		{"duplicate", `{"tasks": [{"id": "a", "description": "A"}, {"id": "a", "description": "B"}]}`, "two tasks have the id a"},
		{"no description", `{"tasks": [{"id": "a"}]}`, "has no description"},
		{"link", "LINK", "project_plan.json in the winner's workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, root := t.TempDir(), filepath.Join(t.TempDir(), "plans")
			switch tc.body {
			case "":
			case "LINK":
				must(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(ws, "project_plan.json")))
			default:
				write(t, filepath.Join(ws, "project_plan.json"), tc.body)
			}
			_, err := Freeze(root, ws, PlanKind, "q", "", time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("a refused plan was stored: %v", err)
			}
		})
	}
	if _, err := Resolve(t.TempDir(), "latest"); err == nil || !strings.Contains(err.Error(), "no stored plan") {
		t.Errorf("latest of none: %v", err)
	}
}

func TestPrefixesCarryTheSizeControls(t *testing.T) {
	p := Prefix(Options{Depth: "shallow", Steps: 12, Chunks: 3, Thoroughness: "thorough"})
	for _, want := range []string{"project_plan.json", "Depth mode: SHALLOW", "around 12", "around 3", "THOROUGH", "USER'S REQUEST:"} {
		if !strings.Contains(p, want) {
			t.Errorf("plan prefix lacks %q", want)
		}
	}
	if s := SpecPrefix(0); !strings.Contains(s, "project_spec.json") || !strings.Contains(s, "EARS") {
		t.Error("spec prefix")
	}
	if err := (Options{Depth: "huge"}).Check(); err == nil || !strings.Contains(err.Error(), "dynamic, shallow, medium, deep") {
		t.Errorf("bad depth: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
