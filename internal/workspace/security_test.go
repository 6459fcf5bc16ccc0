package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// world is a disk layout for one agent: its workspace, a file outside
// everything, another agent's live workspace, a snapshot (read-only) and
// a project used as a write context path with protected parts.
type world struct {
	base, ws, outside, other, snap, proj string
	g                                    *workspace.Guard
}

func newWorld(t *testing.T) *world {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		other: filepath.Join(base, "other"), snap: filepath.Join(base, "snap"), proj: filepath.Join(base, "proj")}
	files := map[string]string{
		"outside/secret.txt":    "secret",
		"other/live.txt":        "b's work in progress",
		"snap/answer.txt":       "b's snapshot",
		"proj/main.go":          "package main",
		"proj/protected/db.txt": "keep",
		"proj/.env":             "TOKEN=x",
		"ws/mine.txt":           "mine",
	}
	for p, c := range files {
		full := filepath.Join(base, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(c), 0o644))
	}
	w.g, err = workspace.New(workspace.Policy{
		Agent:     "agent_a",
		Workspace: w.ws,
		ReadOnly:  []string{w.snap},
		Context:   []workspace.ContextPath{{Path: w.proj, Write: true, Protected: []string{"protected", ".env"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// refused asserts err is a refusal whose text names want.
func refused(t *testing.T, err error, want string) {
	t.Helper()
	var r *workspace.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not say %q", err, want)
	}
	if !strings.Contains(err.Error(), "You may touch only") {
		t.Errorf("refusal %q does not say what the agent may touch", err)
	}
}

// attempts counts the refused attempts of this file, for the report.
var attempts int

func TestRefusedWritesChangeNothing(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
		do    func(w *world) error
		want  string
	}{
		{"dotdot", nil, func(w *world) error { _, _, err := w.g.WriteFile("../outside/x.txt", []byte("x")); return err }, "outside every directory"},
		{"dotdot over existing", nil, func(w *world) error {
			_, _, err := w.g.WriteFile("../outside/secret.txt", []byte("x"))
			return err
		}, "outside every directory"},
		{"dotdot inside a path", nil, func(w *world) error {
			_, _, err := w.g.WriteFile("sub/../../outside/x.txt", []byte("x"))
			return err
		}, "outside"},
		{"absolute", nil, func(w *world) error {
			_, _, err := w.g.WriteFile(filepath.Join(w.outside, "x.txt"), []byte("x"))
			return err
		}, "outside every directory"},
		{"absolute /etc", nil, func(w *world) error { _, _, err := w.g.WriteFile("/etc/massgen-test", []byte("x")); return err }, "outside"},
		{"planted file symlink", func(w *world) {
			must(t, os.Symlink(filepath.Join(w.outside, "secret.txt"), filepath.Join(w.ws, "link")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("link", []byte("x")); return err }, "leads out of"},
		{"planted relative file symlink", func(w *world) {
			must(t, os.Symlink("../outside/secret.txt", filepath.Join(w.ws, "rlink")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("rlink", []byte("x")); return err }, "leads out of"},
		{"planted dir symlink", func(w *world) {
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "d")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("d/new.txt", []byte("x")); return err }, "leads out of"},
		{"planted dir symlink, existing file", func(w *world) {
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "d")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("d/secret.txt", []byte("x")); return err }, "leads out of"},
		{"symlink in an intermediate component, making dirs", func(w *world) {
			must(t, os.MkdirAll(filepath.Join(w.ws, "a"), 0o755))
			must(t, os.Symlink("../../outside", filepath.Join(w.ws, "a", "b")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("a/b/c/d/x.txt", []byte("x")); return err }, "leads out of"},
		{"symlink to /proc magic link", func(w *world) {
			must(t, os.Symlink("/proc/self/root", filepath.Join(w.ws, "root")))
		}, func(w *world) error {
			_, _, err := w.g.WriteFile("root"+w.outside+"/x.txt", []byte("x"))
			return err
		}, "leads out of"},
		{"mkdir through a dir symlink", func(w *world) {
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "d")))
		}, func(w *world) error { _, err := w.g.Mkdir("d/newdir"); return err }, "leads out of"},
		{"delete through a dir symlink", func(w *world) {
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "d")))
		}, func(w *world) error { _, err := w.g.Remove("d/secret.txt"); return err }, "leads out of"},
		{"hard link to an outside file", func(w *world) {
			must(t, os.Link(filepath.Join(w.outside, "secret.txt"), filepath.Join(w.ws, "hard.txt")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("hard.txt", []byte("x")); return err }, "hard links"},
		{"protected directory, even for the presenter", func(w *world) { w.g.SetFinalPresentation(true) },
			func(w *world) error {
				_, _, err := w.g.WriteFile(filepath.Join(w.proj, "protected", "db.txt"), []byte("x"))
				return err
			}, "protected path"},
		{"protected new file inside a protected directory", func(w *world) { w.g.SetFinalPresentation(true) },
			func(w *world) error {
				_, _, err := w.g.WriteFile(filepath.Join(w.proj, "protected", "new", "x.txt"), []byte("x"))
				return err
			}, "protected path"},
		{"protected file", func(w *world) { w.g.SetFinalPresentation(true) },
			func(w *world) error {
				_, _, err := w.g.WriteFile(filepath.Join(w.proj, ".env"), []byte("x"))
				return err
			}, "protected path"},
		{"write context path before the final presentation", nil, func(w *world) error {
			_, _, err := w.g.WriteFile(filepath.Join(w.proj, "main.go"), []byte("x"))
			return err
		}, "only by the winner during the final presentation"},
		{"new file in a write context path before the final presentation", nil, func(w *world) error {
			_, _, err := w.g.WriteFile(filepath.Join(w.proj, "pkg", "new.go"), []byte("x"))
			return err
		}, "only by the winner"},
		{"presentation over", func(w *world) { w.g.SetFinalPresentation(true); w.g.SetFinalPresentation(false) },
			func(w *world) error {
				_, _, err := w.g.WriteFile(filepath.Join(w.proj, "main.go"), []byte("x"))
				return err
			}, "only by the winner"},
		{"read-only snapshot", nil, func(w *world) error {
			_, _, err := w.g.WriteFile(filepath.Join(w.snap, "answer.txt"), []byte("x"))
			return err
		}, "read-only"},
		{"delete in a snapshot", nil, func(w *world) error { _, err := w.g.Remove(filepath.Join(w.snap, "answer.txt")); return err }, "read-only"},
		{"delete a file neither created nor read", nil, func(w *world) error { _, err := w.g.Remove("mine.txt"); return err }, "neither created nor read"},
		{"delete a context file the presenter did not read", func(w *world) { w.g.SetFinalPresentation(true) },
			func(w *world) error { _, err := w.g.Remove(filepath.Join(w.proj, "main.go")); return err }, "neither created nor read"},
		{"symlink to another agent's workspace", func(w *world) {
			must(t, os.Symlink(w.other, filepath.Join(w.ws, "b")))
		}, func(w *world) error { _, _, err := w.g.WriteFile("b/live.txt", []byte("x")); return err }, "leads out of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.setup != nil {
				c.setup(w)
			}
			before := wstest.Snapshot(t, w.base)
			err := c.do(w)
			attempts++
			refused(t, err, c.want)
			wstest.Unchanged(t, w.base, before)
		})
	}
}

func TestRefusedReads(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
		path  func(w *world) string
		want  string
	}{
		{"another agent's live workspace", nil, func(w *world) string { return filepath.Join(w.other, "live.txt") }, "outside every directory"},
		{"dotdot", nil, func(w *world) string { return "../outside/secret.txt" }, "outside every directory"},
		{"planted symlink", func(w *world) {
			must(t, os.Symlink(filepath.Join(w.outside, "secret.txt"), filepath.Join(w.ws, "link")))
		}, func(w *world) string { return "link" }, "leads out of"},
		{"proc self root", nil, func(w *world) string { return "/proc/self/root" + w.outside + "/secret.txt" }, "outside"},
		{"etc passwd", nil, func(w *world) string { return "/etc/passwd" }, "outside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.setup != nil {
				c.setup(w)
			}
			data, _, _, err := w.g.ReadFile(c.path(w), 0)
			attempts++
			refused(t, err, c.want)
			if len(data) > 0 {
				t.Errorf("a refused read returned %q", data)
			}
			_, _, err = w.g.ReadDir(filepath.Dir(c.path(w)))
			if c.setup == nil && err == nil {
				t.Errorf("listing %s was allowed", filepath.Dir(c.path(w)))
			}
		})
	}
}

// TestHiddenInsideContext: the run keeps its workspaces inside the user's
// project (a context path); another agent's live workspace stays invisible
// while the agent's own and the snapshots stay reachable.
func TestHiddenInsideContext(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "proj")
	mine := filepath.Join(proj, ".massgen", "workspaces", "run1", "agent_a")
	theirs := filepath.Join(proj, ".massgen", "workspaces", "run1", "agent_b")
	snap := filepath.Join(proj, ".massgen", "snapshots", "run1", "agent1")
	for _, d := range []string{mine, theirs, snap} {
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "f.txt"), []byte(d), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(proj, "README"), []byte("hi"), 0o644))
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: mine, ReadOnly: []string{snap},
		Context: []workspace.ContextPath{{Path: proj}}, Hidden: []string{filepath.Join(proj, ".massgen")}})
	must(t, err)
	before := wstest.Snapshot(t, base)
	_, _, _, err = g.ReadFile(filepath.Join(theirs, "f.txt"), 0)
	refused(t, err, "not visible")
	_, _, err = g.WriteFile(filepath.Join(theirs, "f.txt"), []byte("x"))
	refused(t, err, "not visible")
	attempts += 2
	wstest.Unchanged(t, base, before)
	for _, p := range []string{filepath.Join(mine, "f.txt"), "f.txt", filepath.Join(snap, "f.txt"), filepath.Join(proj, "README")} {
		if _, _, _, err := g.ReadFile(p, 0); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
	ents, _, err := g.ReadDir(proj)
	must(t, err)
	for _, e := range ents {
		if e.Name == ".massgen" {
			t.Errorf("listing the project shows .massgen")
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if attempts > 0 && testing.Verbose() {
		println("workspace security: refused attempts:", attempts)
	}
	os.Exit(code)
}
