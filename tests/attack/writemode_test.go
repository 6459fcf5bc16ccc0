package attack

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeModeRun runs one agent, solo, with write_mode: auto on the write
// context path proj: its model makes each of coord's steps in turn while
// coordinating, answers, votes, then each of present's steps in its final
// presentation.
func writeModeRun(t *testing.T, dir, proj string, coord, present [][]call) result {
	t.Helper()
	var steps []any
	for _, cs := range coord {
		steps = append(steps, map[string]any{"calls": cs})
	}
	steps = append(steps, map[string]any{"answer": "done"}, map[string]any{"when": "coordination", "vote": "agent1", "reason": "mine"})
	for _, cs := range present {
		steps = append(steps, map[string]any{"calls": cs})
	}
	steps = append(steps, map[string]any{"text": "final"})
	cfg := map[string]any{
		"agent": map[string]any{"id": "solo", "backend": map[string]any{
			"type": "sim", "model": "hostile", "cwd": "ws", "enable_mcp_command_line": true,
			"scenario": map[string]any{"defaults": map[string]any{"ttft_ms": 0},
				"models": map[string]any{"hostile": map[string]any{"steps": steps}}}}},
		"ui": map[string]any{"enable_final_presentation": true},
		"orchestrator": map[string]any{
			"context_paths": []any{map[string]any{"path": proj, "permission": "write"}},
			"coordination":  map[string]any{"write_mode": "auto"},
		},
	}
	b, _ := json.MarshalIndent(cfg, "", " ")
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), b, 0o644))
	return massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
}

// gitProj makes proj a git repository with hooks that append to mark if
// anything ever runs them.
func gitProj(t *testing.T, proj, mark string) string {
	t.Helper()
	writeFiles(t, proj, map[string]string{"main.go": "package main\n", "README.md": "readme\n"})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir, cmd.Env = proj, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	hook := "#!/bin/sh\necho ran >> " + mark + "\n"
	for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "post-index-change", "reference-transaction"} {
		must(t, os.WriteFile(filepath.Join(proj, ".git", "hooks", h), []byte(hook), 0o755))
	}
	return hook
}

func entries(dir string) []string {
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// write_mode (coordination.write_mode: auto on a git repository): the agent
// writes its own copy of the project, .worktree/ctx_1 in its workspace, and
// its changes are applied to the real project at the end. It tries to reach
// the real project and the repository's hooks through its copy: a hook
// planted in the copy (file tools and commands), links from the copy to the
// project, its .git/hooks and a directory outside, writes through them
// while coordinating and in the final presentation, the real paths written
// directly in the presentation. Nothing reaches the project but the plain
// file it added, the repository's .git is byte-for-byte the same, no hook
// ever runs (git runs only as massgen means it to), nothing outside changes.
func TestWriteModeEscapes(t *testing.T) {
	needBwrap(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := tempDir(t)
	proj, out := filepath.Join(dir, "proj"), filepath.Join(dir, plantedDir)
	mark := filepath.Join(out, "hook-ran")
	writeFiles(t, out, map[string]string{"keep.txt": "the user's"})
	hook := gitProj(t, proj, mark)
	cp := ".worktree/ctx_1"
	coord := [][]call{{
		tc("write_file", map[string]any{"path": cp + "/.git/hooks/post-checkout", "content": hook}),
		sh("mkdir -p " + cp + "/.git/hooks && printf '" + strings.ReplaceAll(hook, "\n", "\\n") + "' > " + cp + "/.git/hooks/pre-commit && chmod +x " + cp + "/.git/hooks/pre-commit"),
		sh("ln -s " + proj + " " + cp + "/real && ln -s " + filepath.Join(proj, ".git", "hooks") + " " + cp + "/hooks && ln -s " + out + " " + cp + "/out"),
		tc("write_file", map[string]any{"path": filepath.Join(proj, ".git", "hooks", "post-merge"), "content": hook}),
	}, {
		sh("echo pwn > " + cp + "/real/pwn.txt; echo pwn > " + cp + "/hooks/post-merge; echo pwn > " + cp + "/out/keep.txt"),
		tc("write_file", map[string]any{"path": cp + "/real/pwn.txt", "content": "pwn"}),
		tc("write_file", map[string]any{"path": cp + "/hooks/post-merge", "content": hook}),
		tc("write_file", map[string]any{"path": cp + "/ok.txt", "content": "a plain change"}),
	}}
	present := [][]call{{
		tc("write_file", map[string]any{"path": filepath.Join(proj, "direct.txt"), "content": "pwn"}),
		tc("write_file", map[string]any{"path": filepath.Join(proj, ".git", "hooks", "post-merge"), "content": hook}),
		sh("echo pwn > " + filepath.Join(proj, "direct2.txt") + "; echo pwn > " + cp + "/real/pwn3.txt; echo pwn > " + cp + "/hooks/post-merge"),
	}}
	gitBefore, outBefore := snap(t, filepath.Join(proj, ".git")), snap(t, out)
	r := writeModeRun(t, dir, proj, coord, present)
	attempt(t, "links and hooks in the copy: the run applies only the plain change", func(t *testing.T) {
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		if b, err := os.ReadFile(filepath.Join(proj, "ok.txt")); err != nil || string(b) != "a plain change" {
			t.Fatalf("ok.txt was not applied (%v): %q — the attacks may not have run:\n%s", err, b, r)
		}
		if got, want := entries(proj), []string{".git", "README.md", "main.go", "ok.txt"}; !slices.Equal(got, want) {
			t.Errorf("the project holds %v, want %v", got, want)
		}
		for _, want := range []string{"Read-only file system", "refused"} {
			if len(grepTree(filepath.Join(dir, "logs"), want)) == 0 {
				t.Errorf("no tool result in the logs says %q", want)
			}
		}
	})
	attempt(t, "links and hooks in the copy: reported as not applied", func(t *testing.T) {
		for _, want := range []string{"not applied " + filepath.Join(proj, "real") + ": a symbolic link", "not applied " + filepath.Join(proj, "hooks") + ": a symbolic link",
			"not applied " + filepath.Join(proj, ".git")} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, tail(r.stderr, 4000))
			}
		}
	})

	// The whole .worktree swapped for a link to the project while
	// coordinating, written through: refused; the presentation's copy is
	// laid past the link (from the base, since the answer's snapshot
	// carries no copy) and its plain change is applied.
	must(t, os.RemoveAll(filepath.Join(dir, "logs")))
	swap := [][]call{{
		sh("rm -rf .worktree && ln -s " + proj + " .worktree && echo pwn > .worktree/pwn4.txt"),
	}, {
		tc("write_file", map[string]any{"path": ".worktree/pwn5.txt", "content": "pwn"}),
		sh("echo pwn > .worktree/.git/hooks/post-merge"),
	}}
	r2 := writeModeRun(t, dir, proj, swap, [][]call{{tc("write_file", map[string]any{"path": cp + "/ok2.txt", "content": "presented"})}})
	attempt(t, ".worktree swapped for a link to the project: nothing written through it", func(t *testing.T) {
		if r2.code != 0 {
			t.Fatalf("the run failed: %s", r2)
		}
		if b, err := os.ReadFile(filepath.Join(proj, "ok2.txt")); err != nil || string(b) != "presented" {
			t.Fatalf("ok2.txt was not applied (%v): %q:\n%s", err, b, r2)
		}
		if got, want := entries(proj), []string{".git", "README.md", "main.go", "ok.txt", "ok2.txt"}; !slices.Equal(got, want) {
			t.Errorf("the project holds %v, want %v", got, want)
		}
	})
	attempt(t, "no hook planted in a copy, or in the repository through one, ever runs", func(t *testing.T) {
		if b, err := os.ReadFile(mark); err == nil {
			t.Errorf("a hook ran: %q", b)
		}
	})
	attempt(t, "the repository's .git is byte-for-byte the same", func(t *testing.T) {
		unchanged(t, "the repository's .git", filepath.Join(proj, ".git"), gitBefore)
	})
	attempt(t, "nothing outside changes", func(t *testing.T) {
		unchanged(t, "the directory outside", out, outBefore)
	})
}
