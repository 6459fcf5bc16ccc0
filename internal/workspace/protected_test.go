package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// Finding 3 of issue 17, for the file tools: a protected name was kept
// only if it existed at the start, so the presenting winner could create
// .env, .massgen/config.yaml, .git/hooks and a missing protected path.
func TestFileToolsRefuseProtectedNamesWhetherOrNotTheyExist(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, proj := filepath.Join(base, "ws"), filepath.Join(base, "proj")
	for _, d := range []string{ws, filepath.Join(proj, "sub", ".git"), filepath.Join(proj, "lib")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(proj, "sub", ".git", "config"), []byte("[core]\n"), 0o644)
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: ws, Context: []workspace.ContextPath{{
		Path: proj, Write: true, Protected: []string{filepath.Join(proj, "secrets") + "/", filepath.Join(proj, "lib", "key.pem")},
		ProtectedNames: []string{".git", ".env*", ".massgen"}}}})
	if err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, proj)
	g.SetFinalPresentation(true)
	for _, p := range []string{
		".env", ".env.local", ".massgen/config.yaml", ".git/config", ".git/hooks/post-checkout",
		"sub/.git/config", "sub/.git/hooks/pre-commit", "a/b/.git/HEAD", "a/.massgen/x", "deep/.env.production",
		"secrets/key.pem", "lib/key.pem",
	} {
		full := filepath.Join(proj, p)
		_, _, err := g.WriteFile(full, []byte("planted"))
		var ref *workspace.Refusal
		if !errors.As(err, &ref) {
			t.Errorf("write %s: %v, want a refusal", p, err)
		}
		if _, err := g.Mkdir(filepath.Join(proj, p, "d")); err == nil {
			t.Errorf("mkdir under %s allowed", p)
		}
	}
	g.SetFinalPresentation(false)
	// The placeholders made for the kernel are gone with the presentation;
	// only the empty directories the refused writes' parents left may stay.
	for _, d := range []string{"a/b", "a", "deep"} {
		os.Remove(filepath.Join(proj, d))
	}
	wstest.Unchanged(t, proj, before)
	// An ordinary file is still writable in the presentation.
	g.SetFinalPresentation(true)
	if _, _, err := g.WriteFile(filepath.Join(proj, "main.go"), []byte("package main")); err != nil {
		t.Errorf("an ordinary write: %v", err)
	}
	g.SetFinalPresentation(false)
}
