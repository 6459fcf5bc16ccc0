package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// Findings 3 and 5 of issue 17: protected names that did not exist at the
// start could be made by the presenting winner's commands (a .massgen
// config the user's next run would load, git hooks), and a nested
// repository's .git was writable. Each attempt is made during the final
// presentation, when the context path is writable; the tree on disk must
// be what it was, except for the one ordinary file the winner may write.
func TestProtectedNamesHoldForCommandsWhetherOrNotTheyExist(t *testing.T) {
	needBwrap(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, proj := filepath.Join(base, "ws"), filepath.Join(base, "proj")
	for p, c := range map[string]string{
		"ws/x.txt": "x", "proj/main.go": "package main", "proj/sub/.git/config": "[core]\n", "proj/sub/code.go": "package sub",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755)
		os.WriteFile(filepath.Join(base, p), []byte(c), 0o644)
	}
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: ws, Context: []workspace.ContextPath{{
		Path: proj, Write: true, Protected: []string{filepath.Join(proj, "secrets") + "/"},
		ProtectedNames: []string{".git", ".env*", ".massgen"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, proj)
	g.SetFinalPresentation(true)
	attempts := []string{
		"echo K=v > " + proj + "/.env",
		"echo K=v > " + proj + "/.env.local",
		"mkdir -p " + proj + "/.massgen && echo 'agents: []' > " + proj + "/.massgen/config.yaml",
		"mkdir -p " + proj + "/.git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned' > " + proj + "/.git/hooks/post-checkout && chmod +x " + proj + "/.git/hooks/post-checkout",
		"git -C " + proj + " init -q 2>&1",
		"mkdir -p " + proj + "/secrets && echo key > " + proj + "/secrets/key.pem",
		"echo '[core] fsmonitor = touch /tmp/pwned' >> " + proj + "/sub/.git/config",
		"mkdir -p " + proj + "/sub/.git/hooks && echo x > " + proj + "/sub/.git/hooks/pre-commit",
		"rm -rf " + proj + "/sub/.git",
		"mv " + proj + "/sub/.git " + proj + "/sub/git-moved",
		"mkdir -p " + proj + "/new/.git/hooks && echo x > " + proj + "/new/.git/hooks/pre-commit",
		"mkdir -p /tmp/m && echo 'x' > /tmp/m/config.yaml && mv /tmp/m " + proj + "/.massgen",
		"cd " + proj + " && ln -s /etc .env.prod",
		"cd " + proj + " && mkdir d && echo a > d/x && tar cf /tmp/t.tar -C " + proj + " d && rm -rf d && mkdir -p /tmp/x/.git && tar cf /tmp/t2.tar -C /tmp/x .git && tar xf /tmp/t2.tar -C " + proj,
	}
	for _, c := range attempts {
		res := mustRun(t, r, c)
		t.Logf("%s → %d %s %s", c, res.ExitCode, strings.TrimSpace(res.Output), res.Note)
	}
	// An ordinary file is still the winner's to write.
	if res := mustRun(t, r, "echo ok > "+proj+"/README.md"); res.ExitCode != 0 {
		t.Fatalf("an ordinary write failed: %+v", res)
	}
	g.SetFinalPresentation(false)
	// README.md and new/ are ordinary: the winner may make them.
	if err := os.Remove(filepath.Join(proj, "README.md")); err != nil {
		t.Errorf("README.md: %v", err)
	}
	if err := os.Remove(filepath.Join(proj, "new")); err != nil {
		t.Errorf("new/ should be left empty, its .git removed: %v", err)
	}
	wstest.Unchanged(t, proj, before)
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("a hook ran")
	}
	if len(g.Reverted()) == 0 {
		t.Error("nothing reported as reverted, though some attempts need the walk")
	}
}
