package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/kit/tasks"
)

// Checklist-gated voting on the simulator with the report gate and
// draft_approach, files on disk checked: a's first checklist has no
// diagnostic report and is refused (diagnostic_report_invalid); it writes
// tasks/diagnostic_report.md with write_file (through its Guard), scores
// again (iterate: E3, the primary criterion, fails), drafts its approach,
// finds the draft in its task plan (tasks/plan.json) and answers again.
// Every later turn follows the default policy, which writes its report
// before it scores and votes. a's second answer wins.
func TestChecklistReportGateAndDraftApproachOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	scores := func(e3 int) string {
		return `{"agent1": {"E1": 9, "E2": 9, "E3": ` + string(rune('0'+e3)) + `, "E4": 9}, "agent2": {"E1": 6, "E2": 6, "E3": 6, "E4": 6}}`
	}
	report := "## E1\nAll requirements are met.\n## E2\nCorrect.\n## E3\nPart two is a placeholder: the gap that matters.\n## E4\nDeliberate.\n"
	cfg := `agents:
  - id: a
    backend:
      type: sim
      model: ma
      cwd: wa
      scenario:
        models:
          ma:
            steps:
              - answer: "a first"
              - calls: [{name: submit_checklist, arguments: '{"scores": ` + scores(5) + `}'}]
              - expect_results: [{name: submit_checklist, contains: 'diagnostic_report_invalid'}]
                calls: [{name: write_file, arguments: '{"path": "tasks/diagnostic_report.md", "content": ` + jsonString(report) + `}'}]
              - calls: [{name: submit_checklist, arguments: '{"scores": ` + scores(5) + `, "report_path": "tasks/diagnostic_report.md"}'}]
              - expect_results: [{name: submit_checklist, contains: '"verdict":"new_answer"'}]
                calls: [{name: draft_approach, arguments: '{"improvements": {"E3": [{"plan": "deepen part two", "sources": ["agent1"], "impact": "structural"}]}, "preserve": {"E1": {"what": "every requirement met", "source": "agent1"}}, "vision": "every part with real depth"}'}]
              - expect_results: [{name: draft_approach, contains: 'pre-populated with 3 items'}]
                calls: [{name: get_task_plan, arguments: '{}'}]
              - expect_results: [{name: get_task_plan, contains: '[E3] deepen part two'}]
                answer: "a second, every part deep"
  - id: b
    backend:
      type: sim
      model: mb
      cwd: wb
      scenario:
        models:
          mb:
            steps:
              - answer: "b first"
orchestrator:
  voting_sensitivity: checklist_gated
  max_new_answers_per_agent: 3
  wait_for_first_answers: true
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
`
	out, stderr := runConfigFile(t, dir, cfg)
	wantFinal(t, out, stderr, "a second, every part deep")
	if strings.Contains(stderr, "ignored") {
		t.Errorf("warnings: %s", stderr)
	}
	// a's second answer's snapshot holds its report and the plan its draft laid.
	var plans, reports []string
	_ = filepath.WalkDir(filepath.Join(dir, ".massgen"), func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case strings.HasSuffix(p, filepath.Join("tasks", "plan.json")):
			plans = append(plans, p)
		case strings.HasSuffix(p, filepath.Join("tasks", "diagnostic_report.md")):
			reports = append(reports, p)
		}
		return nil
	})
	found := false
	for _, p := range plans {
		data, err := os.ReadFile(p)
		must(t, err)
		var plan tasks.Plan
		must(t, json.Unmarshal(data, &plan))
		var desc []string
		for _, tk := range plan.Tasks {
			desc = append(desc, tk.Description)
		}
		if len(desc) == 3 && desc[0] == "every part with real depth" && desc[1] == "[E3] deepen part two" &&
			strings.Contains(desc[2], "[E1] every requirement met (agent1)") && plan.Tasks[1].Metadata["injected"] == true &&
			plan.Tasks[1].Metadata["criterion_id"] == "E3" {
			found = true
		}
	}
	if !found {
		t.Errorf("no tasks/plan.json holds the draft's three tasks: %q", plans)
	}
	got := false
	for _, p := range reports {
		data, err := os.ReadFile(p)
		must(t, err)
		got = got || string(data) == report
	}
	if !got {
		t.Errorf("no tasks/diagnostic_report.md holds a's report: %q", reports)
	}
}

// jsonString is s as a JSON string literal inside a single-quoted YAML
// scalar.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "'", "''")
}
