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
	sandbox.Program(bwrap, g, cmd, []string{"PATH=/usr/bin:/bin"})
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
