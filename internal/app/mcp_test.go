package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/llmsim/simtest"
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
                  - {name: mcp__everything__trigger-long-running-operation, arguments: '{"duration": 0.2, "steps": 2}'}
              - expect_results:
                  - {name: mcp__everything__get-sum, contains: "42"}
                  - {name: mcp__everything__trigger-long-running-operation, contains: "completed"}
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
	out, err := Execute(t.Context(), env, Request{
		Question:  "What is 2+40?",
		Team:      Team{ConfigYAML: []byte(mcpTeam(server, pidFile))},
		Overrides: Overrides{Timeout: 120},
		Logging:   Logging{LogDir: filepath.Join(dir, "logs")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || !strings.Contains(out.Final, "The sum is 42.") {
		t.Fatalf("status %s, final %q, err %v\nstderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if n := out.Tools["adder"].Calls; n != 2 {
		t.Errorf("adder made %d tool calls, want 2", n)
	}
	// The server's progress notifications are tool_progress events, in the
	// run's log (the last may arrive after the result, when nobody listens
	// any more), and its stderr log was written in the run's log
	// directory from the start.
	if b, err := os.ReadFile(filepath.Join(out.LogDir, "massgen.log")); err != nil ||
		!strings.Contains(string(b), "adder: mcp__everything__trigger-long-running-operation 1/2 (50%)") ||
		!strings.Contains(string(b), "path="+filepath.Join(out.LogDir, "mcp_everything_stderr.log")) {
		ents, _ := os.ReadDir(out.LogDir)
		t.Errorf("massgen.log lacks the tool's progress (%v) in %s %v:\n%s", err, out.LogDir, ents, b)
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

// In massgen serve a cached team keeps its servers across requests, and
// stops them when the cache closes.
func TestCachedTeamReusesItsMCPServerAcrossRuns(t *testing.T) {
	server := mcpEverything(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	cfgPath := filepath.Join(dir, "team.yaml")
	// A simulator of its own: a team with a built-in one is not shared
	// (each request replays its script). The turns wait for the tools.
	_, url := simtest.Start(t, "")
	cfg := fmt.Sprintf(`agent:
  backend:
    type: chatcompletion
    model: m
    base_url: %q
    mcp_servers:
      everything: {command: sh, args: ["-c", %q]}
`, url, pidWrapper(server, pidFile))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	teams := NewTeamCache()
	for i := range 2 {
		env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
		out, err := Execute(t.Context(), env, Request{Question: "ping?", Team: Team{Config: cfgPath, Teams: teams}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != "completed" {
			t.Fatalf("run %d: status %s, tools %+v, err %v", i+1, out.Status, out.Tools, out.Err)
		}
	}
	pids := readPids(t, pidFile)
	if len(pids) != 1 || !alive(pids[0]) {
		t.Fatalf("servers started: %v (alive: %v), want one, still running between requests", pids, len(pids) > 0 && alive(pids[0]))
	}
	teams.Close()
	if err := gone(pids[0]); err != nil {
		t.Errorf("after the cache closed: %v", err)
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

// A variable of a .env file reaches a stdio server's environment when
// the server's env refers to it, and the server inherits massgen's own
// environment (its #!/usr/bin/env node line finds node through PATH).
func TestDotEnvVariableReachesTheServersEnvironment(t *testing.T) {
	server := mcpEverything(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("MCP_TEST_SECRET=from-dotenv-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`agent:
  id: a
  backend:
    type: sim
    model: a
    scenario:
      models:
        a:
          steps:
            - calls: [{name: mcp__everything__get-env, arguments: '{}'}]
            - expect_results:
                - {name: mcp__everything__get-env, contains: '"GIVEN_SECRET": "from-dotenv-file"'}
              answer: "seen"
    mcp_servers:
      everything:
        command: %q
        args: [stdio]
        env: {GIVEN_SECRET: "${MCP_TEST_SECRET}"}
`, server)
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "env?", Team: Team{ConfigYAML: []byte(cfg)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || !strings.Contains(out.Final, "seen") || out.Tools["a"].Calls != 1 {
		t.Fatalf("status %s, final %q, tools %+v, err %v\nstderr:\n%s", out.Status, out.Final, out.Tools, out.Err, stderr.String())
	}
}
