package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mcpEverything is the path of server-everything from tests/mcp-npm
// (installed by .ci/run with npm ci). The test skips without it, except
// in CI.
func mcpEverything(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MASSGEN_MCP_NPM_BIN")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "tests", "mcp-npm", "node_modules", ".bin"))
	}
	p := filepath.Join(dir, "mcp-server-everything")
	_, err := os.Stat(p)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have the MCP test servers: %v", err)
		}
		t.Skipf("server-everything not available (%v): run `npm ci` in tests/mcp-npm", err)
	}
	return p
}

// pidWrapper is a shell command line that writes the server's pid to
// pidFile and then becomes the server (exec keeps the pid).
func pidWrapper(server, pidFile string) string {
	return fmt.Sprintf("echo $$ >> %s; exec %s stdio", pidFile, server)
}

// mcpTeam is a config of two simulated agents listing the same MCP server
// (one process for both): the first sums 2 and 40 with it and answers
// with the result, the second votes for that answer.
func mcpTeam(server, pidFile string) string {
	return fmt.Sprintf(`agents:
  - id: adder
    backend:
      type: sim
      model: adder
      scenario:
        models:
          adder:
            steps:
              - calls:
                  - {name: mcp__everything__get-sum, arguments: '{"a": 2, "b": 40}'}
              - expect_results:
                  - {name: mcp__everything__get-sum, contains: "42"}
                answer: "The sum is 42."
              - vote: adder
          voter:
            steps:
              - vote: adder
      mcp_servers:
        - name: everything
          command: sh
          args: ["-c", %q]
  - id: voter
    backend:
      type: sim
      model: voter
      allowed_tools: [echo]
      mcp_servers:
        everything:
          command: sh
          args: ["-c", %q]
`, pidWrapper(server, pidFile), pidWrapper(server, pidFile))
}

func TestMCPToolIsCalledInARunAndItsServerStopsAfter(t *testing.T) {
	server := mcpEverything(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "What is 2+40?", ConfigYAML: []byte(mcpTeam(server, pidFile)),
		LogDir: filepath.Join(dir, "logs"), Timeout: 120})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || !strings.Contains(out.Final, "The sum is 42.") {
		t.Fatalf("status %s, final %q, err %v\nstderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if n := out.Tools["adder"].Calls; n != 1 {
		t.Errorf("adder made %d tool calls, want 1", n)
	}
	pids := readPids(t, pidFile)
	if len(pids) != 1 {
		t.Fatalf("server started %d times (%v), want once for both agents", len(pids), pids)
	}
	if err := gone(pids[0]); err != nil {
		t.Errorf("after the run: %v", err)
	}
	// The server's stderr is in the run's log directory.
	if _, err := os.Stat(filepath.Join(out.LogDir, "mcp_everything_stderr.log")); err != nil {
		t.Errorf("stderr log not in the run's logs: %v", err)
	}
	// The voter's filter is bare, and matched.
	if strings.Contains(stderr.String(), "matches no MCP tool") {
		t.Errorf("unexpected filter warning:\n%s", stderr.String())
	}
}

// kill -9 of massgen mid-run leaves no MCP server behind: its process
// group has a parent-death signal.
func TestMCPServerDiesWithAKilledMassgen(t *testing.T) {
	server := mcpEverything(t)
	if testing.Short() {
		t.Skip("builds the massgen binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "massgen")
	build := exec.Command("go", "build", "-o", bin, "./cmd/massgen")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	pidFile := filepath.Join(dir, "pids")
	cfg := fmt.Sprintf(`agent:
  backend:
    type: sim
    scenario:
      models:
        sim:
          steps:
            - calls:
                - {name: mcp__everything__trigger-long-running-operation, arguments: '{"duration": 600, "steps": 1}'}
            - answer: "done"
    mcp_servers:
      everything:
        command: sh
        args: ["-c", %q]
`, pidWrapper(server, pidFile))
	cfgPath := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", cfgPath, "--no-logs", "a long task")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var pid string
	for pid == "" && ctx.Err() == nil { // bounded by ctx
		if p := readPidsQuiet(pidFile); len(p) > 0 {
			pid = p[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid == "" {
		t.Fatal("the MCP server never started")
	}
	if !alive(pid) {
		t.Fatal("the MCP server is not running mid-run")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := gone(pid); err != nil {
		t.Errorf("after kill -9 of massgen: %v (an orphan MCP server)", err)
	}
}

func readPids(t *testing.T, path string) []string {
	t.Helper()
	p := readPidsQuiet(path)
	if p == nil {
		t.Fatalf("no pid file %s: the server never started", path)
	}
	return p
}

func readPidsQuiet(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// gone waits a bounded while (signals are delivered asynchronously) for
// a process to be gone.
func gone(pid string) error {
	for range 100 {
		if !alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %s is still alive", pid)
}

// alive reports whether a process exists and is not a zombie.
func alive(pid string) bool {
	if _, err := strconv.Atoi(pid); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
