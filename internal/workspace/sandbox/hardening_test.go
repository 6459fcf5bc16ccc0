package sandbox_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// The findings of an outside attack on the sandbox (issue 17), each tried
// as a hostile model would and checked for what it got.

const canary = "sk-canary-sandbox-0123456789abcdef"

func mustRun(t *testing.T, r *sandbox.Runner, command string) sandbox.Result {
	t.Helper()
	res, err := r.Run(context.Background(), command, "")
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return res
}

// Finding 1: bwrap itself was started with massgen's environment, and its
// init, pid 1 in the sandbox, showed it in /proc/1/environ.
func TestNoKeyInAnyEnvironmentOfTheSandbox(t *testing.T) {
	needBwrap(t)
	t.Setenv("OPENAI_API_KEY", canary)
	w := newWorld(t)
	r, err := sandbox.New(w.g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"env", "cat /proc/1/environ", "cat /proc/self/environ", "cat /proc/$PPID/environ",
		"for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f; echo; done",
	} {
		res := mustRun(t, r, c)
		if strings.Contains(res.Output, canary) {
			t.Errorf("%q shows the key: %s", c, res.Output)
		}
	}
	// The same attempt succeeds for a name the config gives.
	r2, _ := sandbox.New(w.g, sandbox.Config{Env: []string{"GIVEN=yes"}})
	if res := mustRun(t, r2, "tr '\\0' '\\n' < /proc/self/environ"); !strings.Contains(res.Output, "GIVEN=yes") {
		t.Errorf("a variable the config names is missing: %s", res.Output)
	}
}

// Finding 6: a unix socket with a path, in a directory the sandbox shows
// read-only, reached a host service although there was no network.
func TestNoUnixSocketToTheHostWithoutNetwork(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	sock := filepath.Join(w.proj, "agent.sock")
	accepted := hostService(t, sock, "hello from the host")
	r, err := sandbox.New(w.g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	attempts := []string{
		"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('" + sock + "'); print(s.recv(100))\"",
		"perl -MIO::Socket::UNIX -e 'my $s=IO::Socket::UNIX->new(Peer=>\"" + sock + "\") or die \"no: $!\"; print <$s>'",
		"exec 3<>/dev/tcp/127.0.0.1/1 2>&1; echo tcp",
	}
	for _, c := range attempts {
		res := mustRun(t, r, c)
		if strings.Contains(res.Output, "hello from the host") {
			t.Errorf("%q reached the host's socket: %s", c, res.Output)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host's socket accepted %d connections", n)
	}
	// socketpair, which reaches nothing outside, keeps working.
	if res := mustRun(t, r, "python3 -c \"import socket; a,b=socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\""); !strings.Contains(res.Output, "ok") {
		t.Errorf("socketpair fails in the sandbox: %s", res.Output)
	}
	// With the network allowed, the user said yes to host services.
	rn, _ := sandbox.New(w.g, sandbox.Config{Network: true})
	if res := mustRun(t, rn, attempts[0]); !strings.Contains(res.Output, "hello from the host") {
		t.Errorf("with command_line_allow_network the socket should answer: %s", res.Output)
	}
}

// Finding 7: files of the system only their owner may read (a TLS key,
// 0640 root) were readable, since commands run as massgen's user.
func TestSystemFilesOthersCannotReadAreMasked(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r, err := sandbox.New(w.g, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	private := []string{"/etc/shadow", "/etc/gshadow"}
	if m, _ := filepath.Glob("/etc/ssl/private/*"); len(m) > 0 {
		private = append(private, m...)
	}
	checked := 0
	for _, f := range private {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue // not here, or not readable to us either
		}
		checked++
		res := mustRun(t, r, "cat "+f+" 2>&1; ls -la "+filepath.Dir(f)+" 2>&1")
		if strings.Contains(res.Output, strings.TrimSpace(string(b))[:min(20, len(strings.TrimSpace(string(b))))]) {
			t.Errorf("%s is readable in the sandbox: %s", f, res.Output)
		}
	}
	if id, err := os.ReadFile("/etc/machine-id"); err == nil && len(strings.TrimSpace(string(id))) > 0 {
		checked++
		if res := mustRun(t, r, "cat /etc/machine-id"); strings.Contains(res.Output, strings.TrimSpace(string(id))) {
			t.Errorf("/etc/machine-id is shown: %s", res.Output)
		}
	}
	if checked == 0 {
		t.Skip("no private system file here to try")
	}
	// What anyone may read stays: users, the resolver, certificates.
	if res := mustRun(t, r, "head -c 4 /etc/passwd"); res.ExitCode != 0 {
		t.Errorf("/etc/passwd unreadable: %s", res.Output)
	}
}

// Finding 8 (commands): no controlling terminal to push input into.
func TestCommandsHaveNoTerminal(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r, _ := sandbox.New(w.g, sandbox.Config{})
	res := mustRun(t, r, "exec 3</dev/tty && echo opened-tty; python3 -c \"import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('pushed')\" 2>&1")
	if strings.Contains(res.Output, "opened-tty") || strings.Contains(res.Output, "pushed") {
		t.Errorf("a command reached a terminal: %s", res.Output)
	}
}

// The missing caps: a fork bomb stops at the process limit, well inside
// the command's timeout, and the host is unharmed; a file cannot grow past
// what the workspace has left, and the model is told the workspace is full.
func TestForkBombStopsAtTheProcessLimit(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r, _ := sandbox.New(w.g, sandbox.Config{MaxProcesses: 64, Timeout: 20 * time.Second})
	res := mustRun(t, r, "python3 -c \"import os\nn=0\ntry:\n  while True:\n    if os.fork()==0:\n      import time; time.sleep(30)\n    n+=1\nexcept OSError as e: print('stopped after', n, e)\"; echo done")
	if !strings.Contains(res.Output, "stopped after") || res.TimedOut {
		t.Fatalf("the fork loop was not stopped by a limit: %+v", res)
	}
	var n int
	for _, f := range strings.Fields(res.Output) {
		if v, err := strconv.Atoi(f); err == nil {
			n = v
			break
		}
	}
	if n <= 0 || n > 64 {
		t.Errorf("forks before the limit: %d (%s)", n, res.Output)
	}
	if res := mustRun(t, r, ":(){ :|:& };: ; sleep 1; echo survived"); res.TimedOut {
		t.Errorf("the shell fork bomb ran to the timeout: %+v", res)
	}
}

func TestWorkspaceSizeLimit(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: w.ws, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := sandbox.New(g, sandbox.Config{})
	res := mustRun(t, r, "head -c 5000000 /dev/zero > big; ls -l big")
	if fi, err := os.Stat(filepath.Join(w.ws, "big")); err != nil || fi.Size() > 1<<20 {
		t.Fatalf("a file grew past the workspace limit: %v (%s)", err, res.Output)
	}
	if !strings.Contains(res.Note, "workspace_max_size_mb") {
		t.Errorf("no note on a full workspace: %+v", res)
	}
	mustRun(t, r, "rm big")
	// Over the limit by many files: the model is told.
	res = mustRun(t, r, "for i in 1 2 3; do head -c 900000 /dev/zero > f$i; done")
	if !strings.Contains(res.Note, "workspace_max_size_mb") {
		t.Errorf("no note on a full workspace: %+v", res)
	}
	// The file tools refuse a write past the limit too.
	var ref *workspace.Refusal
	if _, _, err := g.WriteFile("more.txt", make([]byte, 10)); !errors.As(err, &ref) || !strings.Contains(err.Error(), "workspace_max_size_mb") {
		t.Errorf("a file tool wrote into a full workspace: %v", err)
	}
	mustRun(t, r, "rm -f f1 f2 f3")
	// Many small files in one command, each within the file-size limit:
	// the command is stopped once the workspace passes the limit.
	res = mustRun(t, r, "for i in $(seq 200); do head -c 100000 /dev/zero > m$i; sleep 0.02; done; echo finished")
	if strings.Contains(res.Output, "finished") || !strings.Contains(res.Note, "stopped") {
		t.Errorf("a command filling the workspace ran to its end: %+v", res)
	}
	if used := g.Usage(); used > 4<<20 {
		t.Errorf("the workspace holds %d bytes, far past its 1 MiB limit", used)
	}
	mustRun(t, r, "rm -f m*")
	// Deleting still works, and the note goes.
	if res = mustRun(t, r, "rm -f f1 f2 f3 big"); res.Note != "" || res.ExitCode != 0 {
		t.Errorf("after deleting: %+v", res)
	}
}

// Finding 6 for MCP servers: they keep TCP, but a socket file in a context
// path (or an abstract socket of the host, whose network namespace they
// share) reaches a host service only with command_line_allow_network.
func TestProgramsReachNoUnixSocketUnlessAllowed(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	sock := filepath.Join(w.proj, "svc.sock")
	hostService(t, sock, "HOST-ANSWER")
	hostService(t, "@massgen-test-"+filepath.Base(w.base), "HOST-ANSWER")
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		t.Fatal(err)
	}
	script := "import socket\nfor a in ['" + sock + "', '\\0massgen-test-" + filepath.Base(w.base) + "']:\n" +
		"  try:\n    s=socket.socket(socket.AF_UNIX); s.connect(a); print(s.recv(20))\n  except OSError as e: print('refused', e)\n"
	for _, allowed := range []bool{false, true} {
		cmd := exec.Command("/usr/bin/python3", "-c", script)
		sandbox.Program(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin"}, allowed)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := strings.Count(string(out), "HOST-ANSWER"); allowed && got != 2 || !allowed && got != 0 {
			t.Errorf("unix sockets allowed=%v: %d answers: %s", allowed, got, out)
		}
	}
}

// hostService is a service of the host listening on the unix socket addr
// (a path, or "@name" for an abstract one) until the test ends: it answers
// each connection with answer, and counts them.
func hostService(t *testing.T, addr, answer string) *atomic.Int32 {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if !strings.HasPrefix(addr, "@") {
		os.Chmod(addr, 0o777) // a container's user may differ
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Write([]byte(answer + "\n"))
			c.Close()
		}
	}()
	return &accepted
}
