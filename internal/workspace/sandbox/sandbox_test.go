package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// needBwrap skips without a working bubblewrap, except in CI, which
// installs it (and allows the user namespaces it needs).
func needBwrap(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("bwrap"); err != nil {
		why = "bwrap is not installed (apt-get install bubblewrap)"
	} else if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-all", "true").CombinedOutput(); err != nil {
		why = fmt.Sprintf("bwrap cannot create a sandbox here: %v: %s", err, out)
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why + "; .ci/run installs bubblewrap and allows user namespaces")
	}
	t.Skip(why)
}

type world struct {
	base, ws, outside, other, snap, proj string
	g                                    *workspace.Guard
}

func newWorld(t testing.TB) *world {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		other: filepath.Join(base, "other"), snap: filepath.Join(base, "snap"), proj: filepath.Join(base, "proj")}
	for p, c := range map[string]string{
		"outside/secret.txt": "secret", "other/live.txt": "b-live", "snap/answer.txt": "b-snap",
		"proj/main.go": "package main", "proj/.env": "TOKEN=x", "ws/mine.txt": "mine",
	} {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	w.g, err = workspace.New(workspace.Policy{Agent: "agent_a", Workspace: w.ws, ReadOnly: []string{w.snap},
		Context: []workspace.ContextPath{{Path: w.proj, Write: true, Protected: []string{".env"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// escapes are commands that try to change what is outside the agent's
// workspace: by `..`, absolute paths, symbolic links made on the spot,
// read-only snapshots and a write context path before the presentation.
func (w *world) escapes() []string {
	return []string{
		"echo x > ../outside/secret.txt",
		"echo x > ../pwned",
		"cd .. && touch x && touch outside/y",
		"echo x > " + filepath.Join(w.outside, "secret.txt"),
		"mkdir -p " + w.outside + " && echo x > " + filepath.Join(w.outside, "new"),
		"echo x >> " + filepath.Join(w.snap, "answer.txt"),
		"rm -f " + filepath.Join(w.snap, "answer.txt"),
		"echo x >> " + filepath.Join(w.proj, "main.go"),
		"touch " + filepath.Join(w.proj, "new.go"),
		"ln -s " + filepath.Join(w.outside, "secret.txt") + " link && echo x > link",
		"ln -s " + w.outside + " dirlink && echo x > dirlink/new",
	}
}

func (w *world) runner(t testing.TB, cfg sandbox.Config) *sandbox.Runner {
	t.Helper()
	r, err := sandbox.New(w.g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, r *sandbox.Runner, cmd string) sandbox.Result {
	t.Helper()
	res, err := r.Run(context.Background(), cmd, "")
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return res
}

// TestCommandsCannotWriteOutside: every attempt runs for real under
// bubblewrap; outside the workspace the tree is the same afterwards.
func TestCommandsCannotWriteOutside(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{})
	outsideEtc := "/etc/massgen-sandbox-test"
	attempts := append(w.escapes(),
		"echo x > "+outsideEtc,
		"touch /usr/massgen-x",
		"ln "+filepath.Join(w.outside, "secret.txt")+" hard && echo x > hard",
		"cat /proc/self/mountinfo > /dev/null; echo x > /proc/1/root"+filepath.Join(w.outside, "secret.txt"),
	)
	for _, a := range attempts {
		t.Run(a, func(t *testing.T) {
			before := wstest.Snapshot(t, w.base)
			delete := func(tr wstest.Tree) wstest.Tree { // the workspace may change
				var out wstest.Tree
				for _, l := range tr {
					if !strings.Contains(l, " ws") {
						out = append(out, l)
					}
				}
				return out
			}
			res := run(t, r, a)
			t.Logf("exit %d: %s", res.ExitCode, strings.TrimSpace(res.Output))
			after := wstest.Snapshot(t, w.base)
			if strings.Join(delete(before), "\n") != strings.Join(delete(after), "\n") {
				t.Errorf("%q changed the disk outside the workspace:\nbefore %v\nafter  %v", a, delete(before), delete(after))
			}
			if _, err := os.Stat(outsideEtc); err == nil {
				os.Remove(outsideEtc)
				t.Errorf("%q wrote %s", a, outsideEtc)
			}
		})
	}
	// A symlink a command made is still refused to the file tools.
	before := wstest.Snapshot(t, w.outside)
	if _, _, err := w.g.WriteFile("link", []byte("x")); err == nil {
		t.Errorf("write through a command's symlink was allowed")
	}
	if _, _, err := w.g.WriteFile("dirlink/new", []byte("x")); err == nil {
		t.Errorf("write through a command's dir symlink was allowed")
	}
	wstest.Unchanged(t, w.outside, before)
}

func TestCommandView(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	t.Setenv("MASSGEN_TEST_SECRET", "hunter2")
	r := w.runner(t, sandbox.Config{})
	res := run(t, r, "pwd; cat mine.txt; cat "+filepath.Join(w.snap, "answer.txt")+"; echo made > made.txt; env")
	for _, want := range []string{w.ws + "\n", "mine", "b-snap"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
	if strings.Contains(res.Output, "hunter2") {
		t.Errorf("massgen's environment leaked into the command: %s", res.Output)
	}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		if res := run(t, r, "cat /etc/shadow"); strings.Contains(res.Output, "root:") {
			t.Errorf("/etc/shadow is readable in the sandbox: %s", res.Output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "made.txt")); string(b) != "made\n" {
		t.Errorf("the command's file in the workspace: %q", b)
	}
	res = run(t, r, "cat "+filepath.Join(w.other, "live.txt")+"; ls /tmp | wc -l")
	if strings.Contains(res.Output, "b-live") {
		t.Errorf("another agent's live workspace was readable: %s", res.Output)
	}
	if !strings.HasSuffix(strings.TrimSpace(res.Output), "1") {
		// /tmp is a fresh tmpfs: only the path down to this test's base.
		t.Errorf("/tmp is not fresh: %s", res.Output)
	}
	// No network: only the loopback interface exists.
	res = run(t, r, "cat /proc/net/dev")
	if n := strings.Count(res.Output, ":"); n != 1 || !strings.Contains(res.Output, "lo:") {
		t.Errorf("network interfaces in the sandbox: %s", res.Output)
	}
}

func TestPresenterWritesContextNotProtected(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{})
	w.g.SetFinalPresentation(true)
	res := run(t, r, "echo v2 > "+filepath.Join(w.proj, "main.go")+" && echo x > "+filepath.Join(w.proj, ".env"))
	if b, _ := os.ReadFile(filepath.Join(w.proj, "main.go")); string(b) != "v2\n" {
		t.Errorf("the presenter's context write: %q (%s)", b, res.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, ".env")); string(b) != "TOKEN=x" {
		t.Errorf("the protected file changed: %q", b)
	}
	if res.ExitCode == 0 {
		t.Errorf("writing the protected file succeeded: %s", res.Output)
	}
	w.g.SetFinalPresentation(false)
	run(t, r, "echo v3 > "+filepath.Join(w.proj, "main.go"))
	if b, _ := os.ReadFile(filepath.Join(w.proj, "main.go")); string(b) != "v2\n" {
		t.Errorf("a context write after the presentation: %q", b)
	}
}

func TestTimeoutAndOutputCap(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{Timeout: 500 * time.Millisecond, MaxOutput: 1000})
	res := run(t, r, "sleep 60 & sleep 60")
	if !res.TimedOut {
		t.Errorf("not timed out: %+v", res)
	}
	r = w.runner(t, sandbox.Config{MaxOutput: 1000})
	res = run(t, r, "head -c 100000 /dev/zero | tr '\\0' a")
	if len(res.Output) != 1000 || res.Truncated != 99000 {
		t.Errorf("output %d bytes, %d dropped", len(res.Output), res.Truncated)
	}
}

func TestWorkDir(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	os.Mkdir(filepath.Join(w.ws, "sub"), 0o755)
	r := w.runner(t, sandbox.Config{})
	res, err := r.Run(context.Background(), "pwd", "sub")
	if err != nil || strings.TrimSpace(res.Output) != filepath.Join(w.ws, "sub") {
		t.Errorf("work_dir sub: %v %q", err, res.Output)
	}
	for _, d := range []string{"..", w.snap, w.proj} {
		if _, err := r.Run(context.Background(), "pwd", d); err == nil {
			t.Errorf("work_dir %s was allowed", d)
		}
	}
}

// TestWorkspaceInsideHiddenInsideContext: the run's workspaces live in the
// user's project (a context path) under a hidden directory; the agent's
// own workspace is still writable and the others' stay invisible.
func TestWorkspaceInsideHiddenInsideContext(t *testing.T) {
	needBwrap(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "proj")
	runs := filepath.Join(proj, ".massgen", "workspaces")
	mine, theirs := filepath.Join(runs, "r1", "a"), filepath.Join(runs, "r1", "b")
	for _, d := range []string{mine, theirs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(theirs, "live.txt"), []byte("b-live"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: mine, Hidden: []string{runs},
		Context: []workspace.ContextPath{{Path: proj}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, theirs)
	res := run(t, r, "echo hi > f.txt && cat "+filepath.Join(theirs, "live.txt")+"; echo x > "+filepath.Join(theirs, "live.txt"))
	if b, _ := os.ReadFile(filepath.Join(mine, "f.txt")); string(b) != "hi\n" {
		t.Errorf("own workspace not writable: %q (%s)", b, res.Output)
	}
	if strings.Contains(res.Output, "b-live") {
		t.Errorf("another agent's workspace was visible: %s", res.Output)
	}
	wstest.Unchanged(t, theirs, before)
}

func TestFileContextPathInTheSandbox(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	docs := filepath.Join(w.base, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, c := range map[string]string{"spec.md": "the spec", "private.md": "private"} {
		if err := os.WriteFile(filepath.Join(docs, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: w.ws, Context: []workspace.ContextPath{{Path: filepath.Join(docs, "spec.md")}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, docs)
	res := run(t, r, "cat "+filepath.Join(docs, "spec.md")+"; cat "+filepath.Join(docs, "private.md")+"; echo x > "+filepath.Join(docs, "spec.md"))
	if !strings.Contains(res.Output, "the spec") || strings.Contains(res.Output, "private\n") || strings.HasSuffix(res.Output, "private") {
		t.Errorf("output %q", res.Output)
	}
	wstest.Unchanged(t, docs, before)
}
