package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// A simulated two-agent run on a small project: each agent works in its
// own workspace with the file tools and a command, reads the project (a
// read context path), is refused the project before the presentation and
// the other agent's workspace; the winner's workspace ends up in the logs.
func TestWorkspacesInARun(t *testing.T) {
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "README.md"), []byte("fixture readme\n"), 0o644))
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: builder
      cwd: workspace1
      enable_mcp_command_line: true
      command_line_allow_unsandboxed: true
      command_line_blocked_commands: ["git push"]
      scenario:
        defaults: {ttft_ms: 0}
        models:
          builder:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "hello.txt", "content": "hello from a"}'}
                  - {name: read_file, arguments: '{"path": "%[1]s/README.md"}'}
              - expect_results:
                  - {name: write_file, contains: "created"}
                  - {name: read_file, contains: "fixture readme"}
                calls:
                  - {name: execute_command, arguments: '{"command": "cat hello.txt > copy.txt && cat copy.txt"}'}
                  - {name: execute_command, arguments: '{"command": "git push"}'}
              - expect_results:
                  - {name: execute_command, contains: "exit code: 0\nhello from a"}
                  - {name: execute_command, contains: "command_line_blocked_commands"}
                calls:
                  - {name: write_file, arguments: '{"path": "%[1]s/README.md", "content": "defaced"}'}
              - expect_results:
                  - {name: write_file, contains: "only by the winner during the final presentation"}
                answer: "A built hello.txt."
  - id: b
    backend:
      type: sim
      model: snoop
      cwd: workspace2
      scenario:
        defaults: {ttft_ms: 0}
        models:
          snoop:
            steps:
              - calls:
                  - {name: read_file, arguments: '{"path": "../a/hello.txt"}'}
                  - {name: list_directory, arguments: '{"path": ".."}'}
              - expect_results:
                  - {name: read_file, contains: "refused"}
                  - {name: list_directory, contains: "refused"}
                answer: "B found nothing to read."
orchestrator:
  context_paths:
    - path: project
      permission: write
`, proj)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	before := wstest.Snapshot(t, proj)
	out, err := Execute(t.Context(), env, Request{
		Question:  "Build a greeting.",
		Team:      Team{ConfigYAML: []byte(yaml)},
		Overrides: Overrides{Timeout: 120},
		Logging:   Logging{LogDir: filepath.Join(work, "logs")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Winner != "a" {
		t.Fatalf("status %s, winner %q (%s, tally %v, answers %+v), err %v; stderr:\n%s", out.Status, out.Winner, out.How, out.Tally, out.Answers, out.Err, stderr.String())
	}
	if calls := out.Tools["a"].Calls; calls != 5 {
		t.Errorf("agent a made %d tool calls, want 5", calls)
	}
	wstest.Unchanged(t, proj, before)
	if !strings.HasPrefix(out.Workspace, filepath.Join(work, ".massgen", "workspaces")) || filepath.Base(out.Workspace) != "a" {
		t.Errorf("winner's workspace %q", out.Workspace)
	}
	for _, p := range []string{filepath.Join(out.Workspace, "copy.txt"), filepath.Join(out.LogDir, "final", "a", "workspace", "copy.txt")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "hello from a" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if strings.Contains(stderr.String(), "accepted but ignored") {
		t.Errorf("workspace keys were called ignored:\n%s", stderr.String())
	}
}

func TestMissingContextPathFailsAtStart(t *testing.T) {
	work := t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "afile"), nil, 0o644))
	for path, want := range map[string]string{"nowhere": "context path nowhere does not exist", "afile/": "context path afile/ is a file"} {
		yaml := "agent:\n  backend: {type: sim, cwd: ws}\norchestrator:\n  context_paths: [{path: " + path + "}]\n"
		env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: work}
		_, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(yaml)}, Logging: Logging{NoLogs: true}})
		if err == nil || !strings.Contains(err.Error(), want) || KindOf(err) != KindConfig {
			t.Errorf("%s: %v (kind %v), want a config error saying %q", path, err, KindOf(err), want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The winner writes into a `write` context path during its final
// presentation, and only there: the same write was refused while it
// coordinated, and a protected file stays refused even then.
func TestWinnerWritesContextPathInPresentation(t *testing.T) {
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(proj, ".env"), []byte("TOKEN=x\n"), 0o644))
	yaml := fmt.Sprintf(`agent:
  id: solo
  backend:
    type: sim
    model: presenter
    cwd: ws
    scenario:
      defaults: {ttft_ms: 0}
      models:
        presenter:
          steps:
            - calls:
                - {name: write_file, arguments: '{"path": "%[1]s/main.go", "content": "early"}'}
            - expect_results:
                - {name: write_file, contains: "only by the winner"}
              calls:
                - {name: write_file, arguments: '{"path": "patch.txt", "content": "package main // v2\n"}'}
            - expect_results:
                - {name: write_file, contains: "created"}
              answer: "The patch is in my workspace."
            - when: coordination
              vote: agent1
            - calls:
                - {name: edit_file, arguments: '{"path": "%[1]s/main.go", "old_string": "package main\n", "new_string": "package main // v2\n"}'}
                - {name: write_file, arguments: '{"path": "%[1]s/.env", "content": "stolen"}'}
            - expect_results:
                - {name: edit_file, contains: "1 replacement"}
                - {name: write_file, contains: "protected path"}
              text: "Applied the patch to main.go."
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write, protected_paths: [.env]}
`, proj)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Patch main.go.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final != "Applied the patch to main.go." || out.Fallback != "" {
		t.Fatalf("status %s, final %q, fallback %q, err %v; stderr:\n%s", out.Status, out.Final, out.Fallback, out.Err, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); string(b) != "package main // v2\n" {
		t.Errorf("main.go after the presentation: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".env")); string(b) != "TOKEN=x\n" {
		t.Errorf("the protected .env changed: %q", b)
	}
	if calls := out.Tools["solo"].Calls; calls != 4 {
		t.Errorf("tool calls %d, want 4 (2 coordinating, 2 presenting)", calls)
	}
	// What changed is listed, in the outcome and the logs, and the
	// original is kept for undoing.
	real, _ := filepath.EvalSymlinks(proj)
	backup := filepath.Join(out.LogDir, "final", "solo", "context_backup", "1_project")
	want := []string{"modified " + filepath.Join(real, "main.go"), "the originals of " + real + " are in " + backup}
	if strings.Join(out.ContextChanges, "\n") != strings.Join(want, "\n") {
		t.Errorf("context changes %q, want %q", out.ContextChanges, want)
	}
	if b, _ := os.ReadFile(filepath.Join(backup, "main.go")); string(b) != "package main\n" {
		t.Errorf("backup of main.go: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out.LogDir, "final", "solo", "context_changes.txt")); !strings.HasPrefix(string(b), "modified ") {
		t.Errorf("context_changes.txt: %q", b)
	}
}

// With the project itself as a write context path, massgen's own files in
// it stay hidden and its .git stays protected, even for the presenter.
func TestProjectAsContextPathHidesMassgenAndProtectsGit(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	must(t, os.MkdirAll(filepath.Join(work, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(work, ".git", "config"), []byte("[core]\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(work, ".massgen", "massgen_logs", "log_1"), 0o755))
	must(t, os.WriteFile(filepath.Join(work, ".massgen", "massgen_logs", "log_1", "answer.txt"), []byte("other run"), 0o644))
	cfg, err := config.Parse([]byte("agent:\n  backend: {type: sim, cwd: ws}\norchestrator:\n  context_paths: [{path: ., permission: write}]\n"), "c.yaml", nil)
	must(t, err)
	agents, rw, err := withWorkspaces(cfg, work, time.Now(), []orchestrator.Agent{{ID: "agent"}})
	must(t, err)
	call := func(name string, args string) tool.Result {
		tl, ok := agents[0].Tools.Lookup(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return tool.Invoke(t.Context(), tl, args, 0)
	}
	if r := call("read_file", `{"path": "`+filepath.Join(work, ".massgen", "massgen_logs", "log_1", "answer.txt")+`"}`); !r.IsError || !strings.Contains(r.Content, "not visible") {
		t.Errorf("reading the logs: %+v", r)
	}
	if r := call("list_directory", `{"path": "`+work+`"}`); r.IsError || strings.Contains(r.Content, ".massgen") || !strings.Contains(r.Content, ".git/") {
		t.Errorf("listing the project: %+v", r)
	}
	agents[0].OnPresent(true)
	if r := call("write_file", `{"path": "`+filepath.Join(work, ".git", "config")+`", "content": "x"}`); !r.IsError || !strings.Contains(r.Content, "protected") {
		t.Errorf("writing .git as the presenter: %+v", r)
	}
	if r := call("write_file", `{"path": "`+filepath.Join(work, "NEW.md")+`", "content": "x"}`); r.IsError {
		t.Errorf("writing the project as the presenter: %+v", r)
	}
	if r := call("write_file", `{"path": "in-my-workspace.txt", "content": "x"}`); r.IsError {
		t.Errorf("writing the workspace as the presenter: %+v", r)
	}
	agents[0].OnPresent(false)
	if r := call("write_file", `{"path": "`+filepath.Join(work, "NEW2.md")+`", "content": "x"}`); !r.IsError {
		t.Errorf("writing the project after the presentation: %+v", r)
	}
	if got := rw.contextChanges("agent"); len(got) != 1 || got[0] != "added    "+filepath.Join(work, "NEW.md") {
		t.Errorf("changes %q", got)
	}
}

// --cwd-context: the run's extra context paths reach the agents with a
// workspace, and a team without one is told they share nothing.
func TestExtraContextPaths(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	must(t, os.WriteFile(filepath.Join(work, "notes.txt"), []byte("shared notes"), 0o644))
	extra := config.ContextPath{Path: work, Permission: "read"}
	cfg, err := config.Parse([]byte("agent:\n  backend: {type: sim, cwd: ws}\n"), "c.yaml", nil)
	must(t, err)
	agents, _, err := withWorkspaces(cfg, work, time.Now(), []orchestrator.Agent{{ID: "agent"}}, extra)
	must(t, err)
	tl, _ := agents[0].Tools.Lookup("read_file")
	if r := tool.Invoke(t.Context(), tl, `{"path": "`+filepath.Join(work, "notes.txt")+`"}`, 0); r.IsError || r.Content != "shared notes" {
		t.Errorf("reading the shared directory: %+v", r)
	}
	cfg, err = config.Parse([]byte("agent:\n  backend: {type: sim}\n"), "c.yaml", nil)
	must(t, err)
	_, rw, err := withWorkspaces(cfg, work, time.Now(), []orchestrator.Agent{{ID: "agent"}}, extra)
	must(t, err)
	// The warning names what was shared, not a flag (the paths may come
	// from @path in the question).
	if len(rw.warnings) != 1 || !strings.Contains(rw.warnings[0], "the current directory is shared with no agent") ||
		strings.Contains(rw.warnings[0], "--cwd-context") {
		t.Errorf("warnings %q", rw.warnings)
	}
}
