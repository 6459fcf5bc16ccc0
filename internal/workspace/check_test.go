package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
)

// Check judges a path the way the guard's own operations would, without
// touching anything: for tools that do the work themselves (MCP servers).
func TestCheck(t *testing.T) {
	w := newWorld(t)
	must(t, os.Symlink(w.outside, filepath.Join(w.ws, "dirlink")))
	must(t, os.Symlink(filepath.Join(w.outside, "secret.txt"), filepath.Join(w.ws, "filelink")))
	must(t, os.Symlink("mine.txt", filepath.Join(w.ws, "inside")))
	allowed := map[string]workspace.Access{
		"mine.txt":                          workspace.Write,
		"new/deep/x":                        workspace.Write, // not there yet: judged by the workspace
		"inside":                            workspace.Write, // a link that stays inside
		filepath.Join(w.snap, "answer.txt"): workspace.Read,
		filepath.Join(w.proj, "main.go"):    workspace.Read,
		filepath.Join(w.proj, "new.go"):     workspace.Read,
	}
	for p, need := range allowed {
		if err := w.g.Check("op", p, need); err != nil {
			t.Errorf("Check(%s, %v): %v", p, need, err)
		}
	}
	refused := map[string]workspace.Access{
		"../escape":                         workspace.Write,
		"dirlink/new.txt":                   workspace.Read,
		"filelink":                          workspace.Read,
		filepath.Join(w.outside, "x"):       workspace.Read,
		filepath.Join(w.other, "live.txt"):  workspace.Read,
		filepath.Join(w.snap, "answer.txt"): workspace.Write,
		filepath.Join(w.proj, "main.go"):    workspace.Write, // before the final presentation
		filepath.Join(w.proj, ".env"):       workspace.Write,
	}
	for p, need := range refused {
		if err := w.g.Check("op", p, need); err == nil {
			t.Errorf("Check(%s, %v) passed", p, need)
		}
	}
	w.g.SetFinalPresentation(true)
	if err := w.g.Check("op", filepath.Join(w.proj, "main.go"), workspace.Write); err != nil {
		t.Errorf("the presenter may write the context path: %v", err)
	}
	if err := w.g.Check("op", filepath.Join(w.proj, ".env"), workspace.Write); err == nil {
		t.Error("a protected path passed in the presentation")
	}
	if _, err := os.Lstat(filepath.Join(w.ws, "new")); !os.IsNotExist(err) {
		t.Errorf("Check created something: %v", err)
	}
}
