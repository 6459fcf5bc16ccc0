package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npmServer finds a server of tests/mcp-npm, skipping when absent (failing
// in CI, which installs them).
func npmServer(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(mcpEverything(t)), name) // skips or fails as that helper does
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing next to server-everything: %v", name, err)
	}
	return p
}

// Planning mode: during coordination the built-in tools that write and the
// MCP tools not annotated read-only refuse (and change nothing), reading
// works; the winner runs them in the final presentation.
func TestPlanningModeBlocksWritesUntilThePresentation(t *testing.T) {
	fs := npmServer(t, "mcp-server-filesystem")
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	shared := filepath.Join(work, "shared")
	must(t, os.MkdirAll(proj, 0o755))
	must(t, os.MkdirAll(shared, 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(shared, "data.txt"), []byte("data here"), 0o644))
	yaml := fmt.Sprintf(`agents:
  - id: planner
    backend:
      type: sim
      model: planner
      cwd: ws
      mcp_servers:
        fs: {command: %[3]q, args: [%[2]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          planner:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "plan.txt", "content": "the plan"}'}
                  - {name: read_file, arguments: '{"path": "%[1]s/main.go"}'}
                  - {name: mcp__fs__write_file, arguments: '{"path": "%[2]s/x.txt", "content": "x"}'}
                  - {name: mcp__fs__create_directory, arguments: '{"path": "%[2]s/newdir"}'}
                  - {name: mcp__fs__read_text_file, arguments: '{"path": "%[2]s/data.txt"}'}
              - expect_results:
                  - {name: write_file, contains: "blocked during coordination (planning mode active)"}
                  - {name: read_file, contains: "package main"}
                  - {name: mcp__fs__write_file, contains: "may destroy or overwrite"}
                  - {name: mcp__fs__create_directory, contains: "planning mode"}
                  - {name: mcp__fs__read_text_file, contains: "data here"}
                answer: "Plan: write plan.txt and shared/x.txt."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: write_file, arguments: '{"path": "plan.txt", "content": "the plan"}'}
                  - {name: mcp__fs__write_file, arguments: '{"path": "%[2]s/x.txt", "content": "x"}'}
              - expect_results:
                  - {name: write_file, contains: "created"}
                  - {name: mcp__fs__write_file, contains: "Successfully"}
                text: "Done as planned."
ui: {enable_final_presentation: true}
orchestrator:
  context_paths: [{path: project}, {path: shared, permission: write}]
  coordination:
    enable_planning_mode: true
`, proj, shared, fs)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Write the files.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final != "Done as planned." {
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if u := out.Tools["planner"]; u.Calls != 7 || u.Errors != 3 {
		t.Errorf("tool use %+v, want 7 calls of which 3 refused", u)
	}
	if _, err := os.Stat(filepath.Join(shared, "newdir")); !os.IsNotExist(err) {
		t.Errorf("the blocked create_directory made the directory: %v", err)
	}
	for _, p := range []string{filepath.Join(out.Workspace, "plan.txt"), filepath.Join(shared, "x.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the presentation did not write %s: %v", p, err)
		}
	}
	if strings.Contains(stderr.String(), "accepted but ignored") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
