package attack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Checklist-gated voting's diagnostic report is read through the agent's
// Guard, and only a file of its own workspace counts. A hostile gated
// agent points report_path at a file outside everything it was given (by
// absolute path, by ../, through tasks/diagnostic_report.md made a link
// out) and at the other agent's workspace: each submission is refused
// with diagnostic_report_invalid, the secret in those files reaches no
// file of the run (the report is measured, never echoed), and the files
// are byte-for-byte the same.
func TestChecklistReportEscapes(t *testing.T) {
	needBwrap(t)
	dir := tempDir(t)
	out := filepath.Join(dir, plantedDir)
	const secret = "REPORT-SECRET-51c9"
	long := strings.Repeat(secret+" is a diagnostic report long enough to pass the gate. ", 4)
	writeFiles(t, out, map[string]string{"report.md": long})
	before := snap(t, out)
	scores := map[string]any{"agent1": map[string]any{"E1": 9, "E2": 9, "E3": 9, "E4": 9}, "agent2": map[string]any{"E1": 9, "E2": 9, "E3": 9, "E4": 9}}
	check := func(path string) call {
		args := map[string]any{"scores": scores}
		if path != "" {
			args["report_path"] = path
		}
		return tc("submit_checklist", args)
	}
	attempts := []struct{ name, path string }{
		{"an absolute path outside the workspace", filepath.Join(out, "report.md")},
		{"a ../ path out of the workspace", "../../../" + plantedDir + "/report.md"},
		{"the default path made a link out", ""},
		{"the other agent's workspace", "../b/tasks/diagnostic_report.md"},
	}
	var steps []any
	steps = append(steps, map[string]any{"answer": "hostile first"})
	steps = append(steps, map[string]any{"calls": []call{sh("mkdir -p tasks && ln -sf " + filepath.Join(out, "report.md") + " tasks/diagnostic_report.md && ls -l tasks")}})
	for _, a := range attempts {
		steps = append(steps, map[string]any{"calls": []call{check(a.path)}})
	}
	steps = append(steps, map[string]any{"calls": []call{sh("rm tasks/diagnostic_report.md")}})
	steps = append(steps, map[string]any{"calls": []call{tc("write_file", map[string]any{"path": "tasks/diagnostic_report.md",
		"content": strings.Repeat("E1-E4: the answers meet every criterion; no gap found. ", 3)})}})
	steps = append(steps, map[string]any{"calls": []call{check("tasks/diagnostic_report.md")}})
	steps = append(steps, map[string]any{"vote": "agent1", "reason": "passes"})
	agent := func(id, model string, steps []any) map[string]any {
		m := map[string]any{"ttft_ms": 0}
		if steps != nil {
			m["steps"] = steps
		}
		return map[string]any{"id": id, "backend": map[string]any{"type": "sim", "model": model, "cwd": id, "enable_mcp_command_line": true,
			"scenario": map[string]any{"models": map[string]any{model: m}}}}
	}
	cfg := map[string]any{
		"agents":       []any{agent("a", "hostile", steps), agent("b", "plain", nil)},
		"orchestrator": map[string]any{"voting_sensitivity": "checklist_gated", "wait_for_first_answers": true},
		"ui":           map[string]any{"enable_final_presentation": false},
	}
	b, _ := json.MarshalIndent(cfg, "", " ")
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), b, 0o644))
	r := massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
	logs := filepath.Join(dir, "logs")
	// The most refusals any one log file records: each attempt's own.
	refusals := 0
	for _, f := range grepTree(logs, "diagnostic_report_invalid") {
		data, _ := os.ReadFile(f)
		refusals = max(refusals, strings.Count(string(data), `"error_code":"diagnostic_report_invalid"`)+strings.Count(string(data), `\"error_code\":\"diagnostic_report_invalid\"`))
	}
	for _, a := range attempts {
		attempt(t, a.name, func(t *testing.T) {
			if r.code != 0 {
				t.Fatalf("the run failed: %s", r)
			}
			if a.path == "" && len(grepTree(logs, "-> "+filepath.Join(out, "report.md"))) == 0 {
				t.Error("the logs do not show the link made")
			}
			if refusals < len(attempts) {
				t.Errorf("%d submit_checklist calls were refused with diagnostic_report_invalid, want %d", refusals, len(attempts))
			}
			if hits := grepTree(dir, secret); len(hits) > 0 {
				t.Errorf("the report's secret reached %q", hits)
			}
			unchanged(t, "the planted report", out, before)
		})
	}
}
