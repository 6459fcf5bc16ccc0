package app

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/memory"
	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
)

// Issue 21 item 1: a simulated agent plans its work with the planning
// tools — a plan with a dependency, a task completed (which readies the
// next), an unknown dependency and a fourth task past max_tasks_per_plan
// refused, the blocked task named — and answers; tasks/plan.json of its
// workspace holds the plan when it answers (its snapshot) and is gone in
// the next round, which starts with no plan, as upstream clears it before
// a restart.
func TestTaskPlanningEndToEndOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	cfg := `agent:
  id: a
  backend:
    type: sim
    model: m
    cwd: ws
    scenario:
      models:
        m:
          steps:
            - calls:
                - name: create_task_plan
                  arguments: '{"tasks": [{"id": "research", "description": "Research", "verification": "3 sources"}, {"id": "write", "description": "Write", "depends_on": [0], "priority": "high", "verification": "a page"}]}'
            - expect_results: [{name: create_task_plan, contains: '"ready_tasks": 1'}]
              calls: [{name: update_task_status, arguments: '{"task_id": "research", "status": "completed", "completion_notes": "found 3"}'}]
            - expect_results: [{name: update_task_status, contains: '"id": "write"'}]
              calls: [{name: add_task, arguments: '{"description": "Polish", "depends_on": ["ghost"], "verification": "v"}'}]
            - expect_results: [{name: add_task, contains: 'Dependency task does not exist: ghost'}]
              calls: [{name: add_task, arguments: '{"description": "Polish", "depends_on": ["write"], "verification": "reads well"}'}]
            - expect_results: [{name: add_task, contains: '"success": true'}]
              calls: [{name: add_task, arguments: '{"description": "One too many", "verification": "v"}'}]
            - expect_results: [{name: add_task, contains: 'max_tasks_per_plan'}]
              calls: [{name: get_blocked_tasks, arguments: '{}'}]
            - expect_results: [{name: get_blocked_tasks, contains: '"blocking_task_ids"'}]
              calls: [{name: update_task_status, arguments: '{"task_id": "write", "status": "in_progress"}'}]
            - expect_results: [{name: update_task_status, contains: '"in_progress"'}]
              answer: "planned and half done"
            - calls: [{name: get_task_plan, arguments: '{}'}]
            - expect_results: [{name: get_task_plan, contains: '"total_tasks": 0'}]
              vote: agent1
orchestrator:
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
    max_tasks_per_plan: 3
`
	out, stderr := runConfigFile(t, dir, cfg)
	// The simulated model goes on only when each result matched what it
	// expects (it fails the turn otherwise).
	wantFinal(t, out, stderr, "planned and half done")
	if strings.Contains(stderr, "task planning") || strings.Contains(stderr, "ignored") {
		t.Errorf("warnings: %s", stderr)
	}
	live, _ := filepath.Glob(filepath.Join(dir, ".massgen", "workspaces", "*", "a"))
	if len(live) != 1 {
		t.Fatalf("workspaces: %v", live)
	}
	if _, err := os.Stat(filepath.Join(live[0], "tasks", "plan.json")); !os.IsNotExist(err) {
		t.Errorf("plan.json outlived the round it was made in: %v", err)
	}
	var snaps []string
	_ = filepath.WalkDir(filepath.Join(dir, ".massgen"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, filepath.Join("tasks", "plan.json")) && !strings.HasPrefix(p, live[0]) {
			snaps = append(snaps, p)
		}
		return nil
	})
	if len(snaps) == 0 {
		t.Fatal("no snapshot of the workspace holds tasks/plan.json")
	}
	for _, s := range snaps {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		var p tasks.Plan
		must(t, json.Unmarshal(data, &p))
		var got []string
		for _, tk := range p.Tasks {
			got = append(got, tk.ID+":"+string(tk.Status)+":"+strings.Join(tk.Dependencies, ","))
		}
		if len(got) != 3 || got[0] != "research:completed:" || got[1] != "write:in_progress:research" || !strings.HasSuffix(got[2], ":pending:write") {
			t.Errorf("%s: tasks %q", s, got)
		}
		if !strings.HasPrefix(p.AgentID, "planning_") || strings.Contains(string(data), `"agent_id": "a"`) {
			t.Errorf("%s: agent_id %q, want an anonymous token", s, p.AgentID)
		}
		if p.Tasks[0].Metadata["completion_notes"] != "found 3" || p.Tasks[1].Priority != "high" {
			t.Errorf("%s: %s", s, data)
		}
	}
	t.Logf("plan.json in %d snapshots: %q", len(snaps), snaps)
}

// The section and the tools reach the agent only when the config asks.
func TestTaskPlanningIsOfferedOnlyWhenEnabled(t *testing.T) {
	for _, on := range []bool{false, true} {
		src := "agent: {id: a, backend: {type: sim, model: m}}\n"
		if on {
			src += "orchestrator: {coordination: {enable_agent_task_planning: true}}\n"
		}
		cfg, err := config.Parse([]byte(src), "c.yaml", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		rw := &runWorkspaces{}
		agents, err := rw.withTaskPlanning(cfg, []orchestrator.Agent{{ID: "a"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := agents[0].Tools.Names()
		if got := slices.Contains(names, "create_task_plan") && strings.Contains(agents[0].SystemMessage, "<task_planning>"); got != on {
			t.Errorf("enabled %v: tools %q, section %v", on, names, strings.Contains(agents[0].SystemMessage, "<task_planning>"))
		}
		if on && agents[0].BeforeRound == nil {
			t.Error("no BeforeRound to clear the plan")
		}
	}
}

// With filesystem memory the plan gets upstream's memory tasks, as the
// capture mode allows.
func TestTaskPlanningAddsMemoryTasksWithFilesystemMemory(t *testing.T) {
	cfg, err := config.Parse([]byte("agent: {id: a, backend: {type: sim, model: m}}\norchestrator: {coordination: {enable_agent_task_planning: true}}\n"),
		"c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[memory.Mode]string{memory.Round: "prep_memory", memory.VerificationAndFinal: "write_verification_memo", memory.FinalOnly: ""} {
		rw := &runWorkspaces{kit: &runKit{memory: true, mode: mode}}
		agents, err := rw.withTaskPlanning(cfg, []orchestrator.Agent{{ID: "a"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		create, _ := agents[0].Tools.Lookup("create_task_plan")
		res := tool.Invoke(t.Context(), create, `{"tasks":[{"id":"x","description":"X","verification":"v"}]}`, 0)
		if res.IsError || (want != "" && !strings.Contains(res.Content, `"id": "`+want+`"`)) ||
			(want == "" && strings.Contains(res.Content, "memo")) {
			t.Errorf("%s: %s", mode, res.Content)
		}
	}
}

// ownLoop stands for an agent that brings its own tool loop (a CLI agent).
type ownLoop struct{}

func (ownLoop) Run(context.Context, agent.Task, *agent.Inbox) iter.Seq[agent.Outcome] {
	return func(func(agent.Outcome) bool) {}
}

// An agent with its own tool loop gets no planning tools, and the run
// says so.
func TestTaskPlanningSaysWhichAgentsGoWithout(t *testing.T) {
	cfg, err := config.Parse([]byte("agent: {id: a, backend: {type: sim, model: m}}\norchestrator: {coordination: {enable_agent_task_planning: true}}\n"),
		"c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rw := &runWorkspaces{}
	agents, err := rw.withTaskPlanning(cfg, []orchestrator.Agent{{ID: "cli", Impl: ownLoop{}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if agents[0].Tools.Len() != 0 || len(rw.warnings) != 1 || !strings.Contains(rw.warnings[0], "agent cli") {
		t.Errorf("tools %q, warnings %q", agents[0].Tools.Names(), rw.warnings)
	}
}
