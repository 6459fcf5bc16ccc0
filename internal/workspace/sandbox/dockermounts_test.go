package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// additional_mounts in a real container: a read-only mount is readable and
// refuses writes, a rw one is written through to the host; a mount that
// would show what the agent's view hides, write what it keeps read-only,
// or cover a path of the view is refused with a warning that says why (and
// is not there); a missing path is skipped. pass_all_env passes massgen's
// environment, not its HOME or PATH.
func TestDockerAdditionalMounts(t *testing.T) {
	w := newWorld(t)
	data, shared := filepath.Join(w.base, "data"), filepath.Join(w.base, "shared")
	for _, d := range []string{data, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "in.txt"), []byte("data-in"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: w.ws, ReadOnly: []string{w.snap}, Hidden: []string{w.other}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MASSGEN_TEST_PASSED", "passed-through")
	r, err := sandbox.New(g, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: dockertest.Image(t),
		Credentials: sandbox.Credentials{PassAllEnv: true, Mounts: []sandbox.Mount{
			{Host: data, Bind: "/data"},
			{Host: shared, Bind: "/shared", Write: true},
			{Host: w.other, Bind: "/other"},
			{Host: w.snap, Bind: "/snapw", Write: true},
			{Host: shared, Bind: w.ws},
			{Host: filepath.Join(w.base, "missing"), Bind: "/missing"},
		}}}})
	if err != nil || r.Disabled() != nil {
		t.Fatalf("%v %v", err, r.Disabled())
	}
	t.Cleanup(r.Close)
	warns := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{w.other + " is not mounted: it shows", w.snap + " is not mounted: mode rw would make",
		shared + " is not mounted: its bind " + w.ws + " would cover", filepath.Join(w.base, "missing") + " does not exist"} {
		if !strings.Contains(warns, want) {
			t.Errorf("no warning %q in:\n%s", want, warns)
		}
	}
	before := wstest.Snapshot(t, data)
	snapBefore := wstest.Snapshot(t, w.snap)
	otherBefore := wstest.Snapshot(t, w.other)
	res := run(t, r, "cat /data/in.txt; echo; echo x > /data/in.txt || echo refused; echo hi > /shared/out.txt; "+
		"ls /other /snapw /missing 2>&1 | wc -l; echo x > /snapw/answer.txt 2>/dev/null || echo snap-refused; "+
		"echo \"env=$MASSGEN_TEST_PASSED home=$HOME\"; cat mine.txt")
	out := res.Output
	for _, want := range []string{"data-in\n", "refused\n", "snap-refused\n", "env=passed-through home=/tmp\n", "mine"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if slices.Contains(strings.Split(out, "\n"), "b-live") {
		t.Errorf("the hidden directory was shown:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(shared, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("the rw mount: %q, %v", b, err)
	}
	wstest.Unchanged(t, data, before)
	wstest.Unchanged(t, w.snap, snapBefore)
	wstest.Unchanged(t, w.other, otherBefore)
}
