//go:build linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A writable file inside a write context path closed for the rounds (the
// verification memo inside a memory directory) stays writable; its
// siblings are read-only until the final presentation, and the mounts say
// the same.
func TestWritableFileInsideAClosedContextPath(t *testing.T) {
	ws := t.TempDir()
	mem := filepath.Join(ws, "memory", "short_term")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	memo := filepath.Join(mem, "verification_latest.md")
	if err := os.WriteFile(memo, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := New(Policy{Workspace: ws, Context: []ContextPath{{Path: filepath.Join(ws, "memory"), Write: true}}, Writable: []string{memo}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.WriteFile("memory/short_term/verification_latest.md", []byte("ok")); err != nil {
		t.Errorf("memo: %v", err)
	}
	if _, _, err := g.WriteFile("memory/short_term/notes.md", []byte("no")); !isRefusal(err) {
		t.Errorf("notes during the rounds: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(mem, "notes.md")); !os.IsNotExist(err) {
		t.Errorf("notes.md exists after the refusal: %v", err)
	}
	if _, _, err := g.WriteFile("other.md", []byte("ok")); err != nil {
		t.Errorf("the rest of the workspace: %v", err)
	}
	ms := g.Mounts()
	i := slices.IndexFunc(ms, func(m Mount) bool { return m.Path == filepath.Join(g.Workspace(), "memory") })
	j := slices.IndexFunc(ms, func(m Mount) bool {
		return m.Path == filepath.Join(g.Workspace(), "memory/short_term/verification_latest.md")
	})
	if i < 0 || j < i || ms[i].Access != Read || ms[j].Access != Write {
		t.Errorf("mounts %v: want memory read-only, then the memo writable", ms)
	}
	g.SetFinalPresentation(true)
	if _, _, err := g.WriteFile("memory/short_term/notes.md", []byte("yes")); err != nil {
		t.Errorf("notes in the presentation: %v", err)
	}
	g.SetFinalPresentation(false)
	if err := os.Remove(memo); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(g.Mounts(), func(m Mount) bool { return filepath.Base(m.Path) == "verification_latest.md" }) {
		t.Error("a deleted writable file is still bound")
	}
}

func isRefusal(err error) bool {
	_, ok := errors.AsType[*Refusal](err)
	return ok
}
