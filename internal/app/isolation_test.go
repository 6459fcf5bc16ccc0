package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// gitProject makes a git repository for a write context path: a commit,
// an ignored build output, and hooks that leave a mark if anything runs
// them.
func gitProject(t *testing.T, dir, mark string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for p, c := range map[string]string{"README.md": "# demo\nold line\n", "app.py": "print('hi')\n", ".gitignore": "build/\n"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "build/out.bin"), []byte("ignored"), 0o644))
	for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "post-merge", "post-index-change", "reference-transaction"} {
		must(t, os.WriteFile(filepath.Join(dir, ".git/hooks", h), []byte("#!/bin/sh\necho "+h+" >> "+mark+"\n"), 0o755))
	}
}

// A simulated three-agent run with write_mode: auto on a git repository,
// once per drift_conflict_policy. Each agent writes its own copy of the
// project (.worktree/ctx_1 in its workspace) and is refused the real one;
// in its second round every agent starts from a fresh copy and reads the
// others' diffs in the answers it is shown; the winner's presentation
// continues from its winning copy. The user edits the README while the
// run goes on; at the end the winner's changes are applied as the policy
// says. The hostile writes (a .git hook in the copy, the real repository's
// hooks, a directory outside) reach nothing, no hook runs, the
// repository's .git is untouched and nothing outside the project changes.
func TestWriteModeRunOnAGitRepository(t *testing.T) {
	for _, policy := range []string{"skip", "prefer_presenter", "fail"} {
		t.Run(policy, func(t *testing.T) { writeModeRun(t, policy) })
	}
}

func writeModeRun(t *testing.T, policy string) {
	fixedRunName(t)
	work := t.TempDir()
	proj, outside, mark := filepath.Join(work, "project"), filepath.Join(work, "outside"), filepath.Join(t.TempDir(), "hook-ran")
	gitProject(t, proj, mark)
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("the user's"), 0o644))
	view := func(viewer string) string { return filepath.Join(work, ".massgen", "temp_workspaces", "run1", viewer) }
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: alpha
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          alpha:
            steps:
              - calls:
                  - {name: read_file, arguments: '{"path": ".worktree/ctx_1/README.md"}'}
              - expect_results:
                  - {name: read_file, contains: "old line"}
                calls:
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/README.md", "content": "# demo\nnew line by a\n"}'}
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/docs/guide.md", "content": "guide by a\n"}'}
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/.git/hooks/post-checkout", "content": "#!/bin/sh\necho pwned >> %[3]s\n"}'}
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/.massgen_scratch/verification/run.log", "content": "ok"}'}
                  - {name: write_file, arguments: '{"path": "%[1]s/README.md", "content": "direct"}'}
              - expect_results:
                  - {name: write_file, contains: "README.md"}
                  - {name: write_file, contains: "guide.md"}
                  - {name: write_file, contains: "post-checkout"}
                  - {name: write_file, contains: "run.log"}
                  - {name: write_file, contains: "refused"}
                answer: "A: README rewritten, guide added."
              - when: coordination
                calls:
                  - {name: read_file, arguments: '{"path": ".worktree/ctx_1/README.md"}'}
                  - {name: read_file, arguments: '{"path": "%[2]s/agent2/.worktree/ctx_1.diff"}'}
              - expect_results:
                  - {name: read_file, contains: "old line"}
                  - {name: read_file, contains: "+++ b/b.txt"}
                vote: agent1
              - calls:
                  - {name: read_file, arguments: '{"path": ".worktree/ctx_1/README.md"}'}
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/extra.md", "content": "from the presentation\n"}'}
                  - {name: write_file, arguments: '{"path": "%[1]s/README.md", "content": "direct in the presentation"}'}
              - expect_results:
                  - {name: read_file, contains: "new line by a"}
                  - {name: write_file, contains: "extra.md"}
                  - {name: write_file, contains: "refused"}
                text: "README rewritten; guide and extra added."
  - id: b
    backend:
      type: sim
      model: beta
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          beta:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/b.txt", "content": "b was here\n"}'}
              - answer: "B: b.txt added."
              - when: coordination
                calls:
                  - {name: read_file, arguments: '{"path": "%[4]s/agent1/.worktree/ctx_1.diff"}'}
                  - {name: read_file, arguments: '{"path": ".worktree/ctx_1/b.txt"}'}
              - expect_results:
                  - {name: read_file, contains: "+new line by a"}
                  - {name: read_file, contains: "no such file"}
                vote: agent1
  - id: c
    backend:
      type: sim
      model: gamma
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          gamma:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "%[1]s/.git/hooks/post-checkout", "content": "#!/bin/sh\necho pwned >> %[3]s\n"}'}
                  - {name: write_file, arguments: '{"path": ".worktree/ctx_1/../../../../../../outside/keep.txt", "content": "pwned"}'}
                  - {name: write_file, arguments: '{"path": "%[6]s/keep.txt", "content": "pwned"}'}
              - expect_results:
                  - {name: write_file, contains: "refused"}
                  - {name: write_file, contains: "refused"}
                  - {name: write_file, contains: "refused"}
                answer: "C: nothing to change."
              - when: coordination
                calls:
                  - {name: read_file, arguments: '{"path": "%[5]s/agent1/.worktree/ctx_1/docs/guide.md"}'}
              - expect_results:
                  - {name: read_file, contains: "guide by a"}
                vote: agent1
ui: {enable_final_presentation: true}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  context_paths:
    - {path: project, permission: write}
  coordination:
    write_mode: auto
    drift_conflict_policy: %[7]s
`, proj, view("a"), mark, view("b"), view("c"), outside, policy)
	gitBefore, outsideBefore := wstest.Snapshot(t, filepath.Join(proj, ".git")), wstest.Snapshot(t, outside)
	// The user edits the README while the agents work: after the copies
	// were made (the first answer), before the end.
	var once sync.Once
	observe := func(sub *event.Subscription, _ RunInfo) {
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if _, ok := e.(event.AnswerAccepted); ok {
				once.Do(func() {
					must(t, os.WriteFile(filepath.Join(proj, "README.md"), []byte("# demo\nthe user's edit\n"), 0o644))
				})
			}
		}
	}
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{
		Question:  "Improve the project.",
		Team:      Team{ConfigYAML: []byte(yaml)},
		Overrides: Overrides{Timeout: 120},
		Logging:   Logging{LogDir: filepath.Join(work, "logs")},
		Observer:  Observer{Observe: observe},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "README rewritten; guide and extra added." {
		t.Fatalf("status %s, winner %q, final %q (tally %v), err %v; stderr:\n%s", out.Status, out.Winner, out.Final, out.Tally, out.Err, stderr.String())
	}
	for id, n := range map[string]int{"a": 11, "b": 3, "c": 4} {
		if u := out.Tools[id]; u.Calls != n {
			t.Errorf("agent %s made %d tool calls, want %d (a failed expectation ends a scenario early)", id, u.Calls, n)
		}
	}
	if strings.Contains(stderr.String(), "ignored") {
		t.Errorf("a warning says something was ignored:\n%s", stderr.String())
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	readme, guide, extra := read(filepath.Join(proj, "README.md")), read(filepath.Join(proj, "docs/guide.md")), read(filepath.Join(proj, "extra.md"))
	changes := strings.Join(out.ContextChanges, "\n")
	switch policy {
	case "skip":
		if readme != "# demo\nthe user's edit\n" || guide != "guide by a\n" || extra != "from the presentation\n" {
			t.Errorf("skip: README %q, guide %q, extra %q", readme, guide, extra)
		}
		if !strings.Contains(changes, "left as the user has them (drift_conflict_policy: skip): README.md") {
			t.Errorf("changes:\n%s", changes)
		}
	case "prefer_presenter":
		if readme != "# demo\nnew line by a\n" || guide != "guide by a\n" || extra != "from the presentation\n" {
			t.Errorf("prefer_presenter: README %q, guide %q, extra %q", readme, guide, extra)
		}
	case "fail":
		if readme != "# demo\nthe user's edit\n" || !strings.Contains(guide, "no such file") || !strings.Contains(extra, "no such file") {
			t.Errorf("fail: README %q, guide %q, extra %q", readme, guide, extra)
		}
		if !strings.Contains(changes, "nothing applied") || !strings.Contains(strings.Join(out.Warnings, "\n"), "drift_conflict_policy: fail") {
			t.Errorf("changes:\n%s\nstderr:\n%s", changes, stderr.String())
		}
	}
	if policy != "fail" {
		for _, want := range []string{"write_mode: applied", "not applied " + filepath.Join(proj, ".git"), "added    " + filepath.Join(proj, "extra.md")} {
			if !strings.Contains(changes, want) {
				t.Errorf("context changes lack %q:\n%s", want, changes)
			}
		}
		if b := read(filepath.Join(out.LogDir, "final", "a", "context_backup", "1_project", "README.md")); b != "# demo\nthe user's edit\n" {
			t.Errorf("the backup of the README before the apply: %q", b)
		}
	}
	// Never applied: b's file (b lost), the scratch directory, the hook.
	for _, p := range []string{"b.txt", ".massgen_scratch", ".worktree"} {
		if _, err := os.Lstat(filepath.Join(proj, p)); err == nil {
			t.Errorf("%s reached the project", p)
		}
	}
	wstest.Unchanged(t, filepath.Join(proj, ".git"), gitBefore)
	wstest.Unchanged(t, outside, outsideBefore)
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a git hook ran: %s", read(mark))
	}
	// The project holds only what was there and what the policy let in.
	var names []string
	entries, _ := os.ReadDir(proj)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".git", ".gitignore", "README.md", "app.py", "build"}
	if policy != "fail" {
		want = []string{".git", ".gitignore", "README.md", "app.py", "build", "docs", "extra.md"}
	}
	if !slices.Equal(names, want) {
		t.Errorf("the project holds %v, want %v", names, want)
	}
	// The bases are gone with the run.
	if _, err := os.Stat(filepath.Join(work, ".massgen", "workspaces", "run1.isolate")); err == nil {
		t.Error("the run's bases were left behind")
	}
}
