package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// A program under sandbox.Program (how an MCP server of an agent with a
// workspace runs) is held by the kernel alone, without the guard: each
// attempt below is made directly by a shell inside the sandbox.
func TestProgramSeesTheAgentsView(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: w.ws, ReadOnly: []string{w.snap},
		Context: []workspace.ContextPath{{Path: w.proj, Write: true, Protected: []string{filepath.Join(w.proj, ".env")}}},
		Hidden:  []string{w.other}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MASSGEN_TEST_SECRET", "s3cret")
	attempts := []string{
		"echo x > " + w.outside + "/new.txt",
		"echo x > " + w.outside + "/secret.txt",
		"echo x > " + w.snap + "/answer.txt",
		"echo x > " + w.proj + "/.env",
		"cat " + w.other + "/live.txt",
		"echo x > /etc/massgen_sandbox_test",
		"touch /usr/massgen_sandbox_test",
		"ln -s " + w.outside + " link && echo x > link/via-link.txt",
		"test -n \"$MASSGEN_TEST_SECRET\"",
	}
	var script strings.Builder
	for i, a := range attempts {
		fmt.Fprintf(&script, "(%s) 2>/dev/null && echo PASSED_%d || echo refused_%d\n", a, i, i)
	}
	// Above the workspace is the sandbox's own fresh /tmp (the test's
	// directories are under /tmp): a write there may succeed, and vanishes.
	script.WriteString("(cd .. && echo x > up.txt; echo x > " + w.base + "/top.txt) 2>/dev/null\n")
	script.WriteString("echo ok > mine2.txt && echo WROTE_OWN\n")
	before := map[string]wstest.Tree{}
	for _, d := range []string{w.outside, w.snap, w.other, w.proj} {
		before[d] = wstest.Snapshot(t, d)
	}
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script.String())
	sandbox.Program(bwrap, g, cmd, []string{"PATH=/usr/bin:/bin"}, false)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i := range attempts {
		if !strings.Contains(string(out), fmt.Sprintf("refused_%d\n", i)) {
			t.Errorf("attempt %q was not refused: %s", attempts[i], out)
		}
	}
	if !strings.Contains(string(out), "WROTE_OWN") {
		t.Errorf("the program could not write its own workspace: %s", out)
	}
	for d, tree := range before {
		wstest.Unchanged(t, d, tree)
	}
	for _, p := range []string{filepath.Join(w.base, "top.txt"), filepath.Join(w.base, "up.txt"), "/etc/massgen_sandbox_test", "/usr/massgen_sandbox_test"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	t.Logf("%d attempts by a sandboxed program, all refused (and writes above the workspace that stayed in its private /tmp)", len(attempts))
}

// A sandboxed program sees only what it was given: a file outside the
// workspace, outside /tmp and outside the system directories (a stand-in
// for a home directory) does not exist for it. A write context path is
// read-only at the kernel for a program started during coordination
// (nothing changes on disk) and writable for one started in the final
// presentation.
func TestProgramSeesNothingElseAndWritesContextOnlyWhenPresenting(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	// The test's temp dirs are under /tmp, which the sandbox replaces
	// anyway; a home must be elsewhere to prove anything.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp(wd, "home")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.WriteFile(filepath.Join(home, "id_rsa"), []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		t.Fatal(err)
	}
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", script)
		sandbox.Program(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin"}, false)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	projBefore := wstest.Snapshot(t, w.proj)
	out := run(`test -e ` + home + ` && echo HOME_SEEN || echo no_home
cat ` + home + `/id_rsa 2>/dev/null || echo no_key
echo x 2>&1 > ` + w.proj + `/main.go && echo WROTE_CONTEXT
cat ` + w.proj + `/main.go`)
	for _, want := range []string{"no_home", "no_key", "Read-only file system", "package main"} {
		if !strings.Contains(out, want) {
			t.Errorf("coordination: want %q in %q", want, out)
		}
	}
	if strings.Contains(out, "WROTE_CONTEXT") || strings.Contains(out, "PRIVATE") {
		t.Errorf("coordination: %q", out)
	}
	wstest.Unchanged(t, w.proj, projBefore)

	w.g.SetFinalPresentation(true)
	defer w.g.SetFinalPresentation(false)
	out = run(`echo presented > ` + w.proj + `/NEW.md && echo WROTE_CONTEXT
echo x > ` + w.proj + `/.env 2>/dev/null && echo WROTE_PROTECTED
cat ` + home + `/id_rsa 2>/dev/null || echo no_key`)
	if !strings.Contains(out, "WROTE_CONTEXT") || strings.Contains(out, "WROTE_PROTECTED") || !strings.Contains(out, "no_key") {
		t.Errorf("presentation: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(w.proj, "NEW.md")); err != nil || string(b) != "presented\n" {
		t.Errorf("NEW.md: %q %v", b, err)
	}
}
