package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

func TestWorkspaceReadWrite(t *testing.T) {
	w := newWorld(t)
	real, created, err := w.g.WriteFile("src/pkg/a.go", []byte("package a"))
	must(t, err)
	if !created || real != filepath.Join(w.ws, "src/pkg/a.go") {
		t.Errorf("write: real %s created %v", real, created)
	}
	data, size, _, err := w.g.ReadFile(filepath.Join(w.ws, "src/pkg/a.go"), 0)
	must(t, err)
	if string(data) != "package a" || size != 9 {
		t.Errorf("read back %q size %d", data, size)
	}
	data, size, _, err = w.g.ReadFile("src/pkg/a.go", 4)
	must(t, err)
	if string(data) != "pack" || size != 9 {
		t.Errorf("capped read %q size %d", data, size)
	}
	// Overwriting keeps the mode and replaces the content.
	must(t, os.Chmod(filepath.Join(w.ws, "src/pkg/a.go"), 0o755))
	_, created, err = w.g.WriteFile("src/pkg/a.go", []byte("package b"))
	must(t, err)
	fi, _ := os.Stat(filepath.Join(w.ws, "src/pkg/a.go"))
	if created || fi.Mode().Perm() != 0o755 {
		t.Errorf("overwrite: created %v mode %v", created, fi.Mode())
	}
	// A symlink inside the workspace pointing inside it is written through.
	must(t, os.Symlink("src/pkg/a.go", filepath.Join(w.ws, "alias.go")))
	_, _, err = w.g.WriteFile("alias.go", []byte("package c"))
	must(t, err)
	b, _ := os.ReadFile(filepath.Join(w.ws, "src/pkg/a.go"))
	if string(b) != "package c" {
		t.Errorf("write through an inside symlink: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(w.ws, "alias.go")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the inside symlink was replaced")
	}
	// No temporary file is left behind.
	ents, _, err := w.g.ReadDir("src/pkg")
	must(t, err)
	if len(ents) != 1 || ents[0].Name != "a.go" {
		t.Errorf("entries %+v", ents)
	}
	// Reads everywhere the policy allows.
	for _, p := range []string{filepath.Join(w.snap, "answer.txt"), filepath.Join(w.proj, "main.go"), filepath.Join(w.proj, ".env")} {
		if _, _, _, err := w.g.ReadFile(p, 0); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
	if _, _, _, err := w.g.ReadFile("nope.txt", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestContextWriteForThePresenter(t *testing.T) {
	w := newWorld(t)
	w.g.SetFinalPresentation(true)
	_, _, err := w.g.WriteFile(filepath.Join(w.proj, "main.go"), []byte("package main // v2"))
	must(t, err)
	_, _, err = w.g.WriteFile(filepath.Join(w.proj, "cmd", "tool", "main.go"), []byte("package main"))
	must(t, err)
	b, _ := os.ReadFile(filepath.Join(w.proj, "main.go"))
	if string(b) != "package main // v2" {
		t.Errorf("context write: %q", b)
	}
	if _, err := w.g.Remove(filepath.Join(w.proj, "cmd", "tool", "main.go")); err != nil {
		t.Errorf("delete a file the presenter created: %v", err)
	}
}

func TestDeleteAfterRead(t *testing.T) {
	w := newWorld(t)
	_, _, _, err := w.g.ReadFile("mine.txt", 0)
	must(t, err)
	_, err = w.g.Remove("mine.txt")
	must(t, err)
	_, _, err = w.g.WriteFile("new.txt", []byte("x"))
	must(t, err)
	_, err = w.g.Remove("new.txt")
	must(t, err)
	must(t, os.Mkdir(filepath.Join(w.ws, "empty"), 0o755))
	_, err = w.g.Remove("empty")
	must(t, err)
	for _, p := range []string{"mine.txt", "new.txt", "empty"} {
		if _, err := os.Lstat(filepath.Join(w.ws, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	must(t, os.MkdirAll(filepath.Join(w.ws, "full", "x"), 0o755))
	if _, err := w.g.Remove("full"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("delete a full directory: %v", err)
	}
}

func TestWalkDoesNotFollowSymlinks(t *testing.T) {
	w := newWorld(t)
	for _, p := range []string{"a/1.txt", "a/b/2.txt", "c.txt"} {
		_, _, err := w.g.WriteFile(p, []byte(p))
		must(t, err)
	}
	must(t, os.Symlink(w.outside, filepath.Join(w.ws, "a", "out")))
	var got []string
	_, err := w.g.Walk(".", 0, func(rel string, e workspace.Entry) error {
		got = append(got, rel)
		return nil
	})
	must(t, err)
	want := "a a/1.txt a/b a/b/2.txt a/out c.txt mine.txt"
	if strings.Join(got, " ") != want {
		t.Errorf("walk: %q, want %q", strings.Join(got, " "), want)
	}
	_, err = w.g.Walk(".", 3, func(string, workspace.Entry) error { return nil })
	if !errors.Is(err, workspace.ErrWalkLimit) {
		t.Errorf("walk limit: %v", err)
	}
}

func TestPolicyErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		p    workspace.Policy
		want string
	}{
		{workspace.Policy{}, "no workspace"},
		{workspace.Policy{Workspace: filepath.Join(base, "missing")}, "no such file"},
		{workspace.Policy{Workspace: file}, "a directory is expected"},
		{workspace.Policy{Workspace: base, Context: []workspace.ContextPath{{Path: filepath.Join(base, "gone")}}}, "context path"},
		{workspace.Policy{Workspace: base, Context: []workspace.ContextPath{{Path: base, Protected: []string{"/etc"}}}}, "not inside its context path"},
	}
	for _, c := range cases {
		_, err := workspace.New(c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

// TestSwapRace swaps a directory of the workspace for a symlink to the
// outside while writes go through it: whatever the interleaving, nothing
// lands outside (the kernel resolves and opens in one step).
func TestSwapRace(t *testing.T) {
	w := newWorld(t)
	before := wstest.Snapshot(t, w.outside)
	dir, link := filepath.Join(w.ws, "x"), filepath.Join(w.ws, "x-link")
	must(t, os.Mkdir(dir, 0o755))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(link)
			os.Symlink(w.outside, link)
			os.Rename(dir, filepath.Join(w.ws, "x-real"))
			os.Rename(link, dir)
			os.Remove(dir)
			os.Rename(filepath.Join(w.ws, "x-real"), dir)
		}
	})
	for range 500 {
		w.g.WriteFile("x/f.txt", []byte("x"))
		w.g.WriteFile("x/secret.txt", []byte("x"))
	}
	close(stop)
	wg.Wait()
	wstest.Unchanged(t, w.outside, before)
}

// TestFileContextPath: a context path that is a file shares that file,
// not its directory.
func TestFileContextPath(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, docs := filepath.Join(base, "ws"), filepath.Join(base, "docs")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(docs, 0o755))
	shared, sibling := filepath.Join(docs, "spec.md"), filepath.Join(docs, "private.md")
	must(t, os.WriteFile(shared, []byte("spec"), 0o644))
	must(t, os.WriteFile(sibling, []byte("private"), 0o644))
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: ws, Context: []workspace.ContextPath{{Path: shared, Write: true}}})
	must(t, err)
	before := wstest.Snapshot(t, docs)
	if b, _, _, err := g.ReadFile(shared, 0); err != nil || string(b) != "spec" {
		t.Errorf("read the shared file: %q %v", b, err)
	}
	_, _, _, err = g.ReadFile(sibling, 0)
	refused(t, err, "only single files")
	_, _, err = g.ReadDir(docs)
	refused(t, err, "only single files")
	_, _, err = g.WriteFile(shared, []byte("x"))
	refused(t, err, "only by the winner")
	g.SetFinalPresentation(true)
	_, _, err = g.WriteFile(sibling, []byte("x"))
	refused(t, err, "only single files")
	_, _, err = g.WriteFile(filepath.Join(docs, "new.md"), []byte("x"))
	refused(t, err, "only single files")
	wstest.Unchanged(t, docs, before)
	_, _, err = g.WriteFile(shared, []byte("spec v2"))
	must(t, err)
}

func TestDotDotThatStaysInsideAndSymlinkChainsToProtected(t *testing.T) {
	w := newWorld(t)
	if _, _, err := w.g.WriteFile("a/../b.txt", []byte("b")); err != nil {
		t.Errorf("a/../b.txt: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "b.txt")); string(b) != "b" {
		t.Errorf("b.txt: %q", b)
	}
	// A chain of symlinks inside the project ending at a protected file.
	must(t, os.Symlink(".env", filepath.Join(w.proj, "l1")))
	must(t, os.Symlink("l1", filepath.Join(w.proj, "l2")))
	w.g.SetFinalPresentation(true)
	before := wstest.Snapshot(t, w.proj)
	_, _, err := w.g.WriteFile(filepath.Join(w.proj, "l2"), []byte("x"))
	refused(t, err, "")
	wstest.Unchanged(t, w.proj, before)
}
