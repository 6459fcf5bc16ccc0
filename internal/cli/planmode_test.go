package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/kit/planmode"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// --plan-and-execute end to end on one simulated model that serves both
// runs: the planning run's agent writes project_plan.json and answers; it
// is frozen under .massgen/plans/; the execution run's agent finds it as
// its task plan (get_ready_tasks names the first task, completing it
// readies the second) and answers; the stored plan says completed, with
// both runs' log directories. Then --execute-plan latest runs it again.
func TestPlanAndExecuteOnTheSimulator(t *testing.T) {
	plan := `{"tasks": [{"id": "F001", "chunk": "C01", "description": "Scaffold", "metadata": {"verification": "builds"}}, ` +
		`{"id": "F002", "chunk": "C01", "description": "Page", "depends_on": ["F001"], "metadata": {"verification": "renders"}}]}`
	args, _ := json.Marshal(map[string]string{"path": "project_plan.json", "content": plan})
	execute := `
      - when: coordination
        calls: [{name: get_ready_tasks, arguments: '{}'}]
      - when: coordination
        expect_results: [{name: get_ready_tasks, contains: '"id": "F001"'}]
        calls: [{name: update_task_status, arguments: '{"task_id": "F001", "status": "completed"}'}]
      - when: coordination
        expect_results: [{name: update_task_status, contains: '"id": "F002"'}]
        answer: "executed F001"
      - {when: coordination, vote: agent1}
`
	srv, url := simtest.Start(t, fmt.Sprintf(`
models:
  m:
    steps:
      - when: coordination
        calls: [{name: write_file, arguments: '%s'}]
      - {when: coordination, answer: "the plan: scaffold, then the page"}
      - {when: coordination, vote: agent1}
%s%s`, args, execute, execute))
	cfg := map[string]string{"c.yaml": fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: %q, cwd: ws}}\n", url)}
	r := massgen(t, t.Context(), cfg, nil, "--automation", "--config", "c.yaml", "--plan-and-execute", "--plan-depth", "shallow", "Build a site")
	if r.code != 0 || !strings.Contains(r.stdout, "PLAN_DIR: ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "TASK PLANNING MODE") {
		t.Errorf("the planning run's question has no planning instructions")
	}
	s, err := planmode.Resolve(filepath.Join(r.dir, ".massgen", "plans"), "latest")
	if err != nil {
		t.Fatal(err)
	}
	frozen, _ := os.ReadFile(filepath.Join(s.Dir, "frozen", "plan.json"))
	if string(frozen) != plan || s.Meta.Status != planmode.Completed || s.Meta.Question != "Build a site" ||
		s.Meta.PlanningLogDir == "" || s.Meta.ExecutionLogDir == "" || s.Meta.PlanningLogDir == s.Meta.ExecutionLogDir {
		t.Errorf("stored plan %+v\nfrozen: %s", s.Meta, frozen)
	}
	// The execution run's answer is the one printed.
	answer, _ := os.ReadFile(strings.TrimSpace(strings.SplitN(strings.SplitN(r.stdout, "ANSWER_FILE: ", 2)[1], "\n", 2)[0]))
	if !strings.Contains(string(answer), "executed F001") {
		t.Errorf("answer %q", answer)
	}
	// --execute-plan runs a stored plan again, in the same directory.
	code := Run(t.Context(), []string{"--automation", "--config", "c.yaml", "--execute-plan", "latest"},
		Env{Getenv: func(k string) string {
			if k == "HOME" {
				return r.dir
			}
			return ""
		}, Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, WorkDir: r.dir})
	if code != 0 {
		t.Fatalf("--execute-plan latest: exit %d", code)
	}
	again, _ := planmode.Resolve(filepath.Join(r.dir, ".massgen", "plans"), s.Dir)
	if again.Meta.Status != planmode.Completed || again.Meta.ExecutionLogDir == s.Meta.ExecutionLogDir {
		t.Errorf("after --execute-plan: %+v", again.Meta)
	}
	if n := len(srv.Requests()); n < 10 {
		t.Errorf("%d model requests, want the planning run's and two execution runs'", n)
	}
}
