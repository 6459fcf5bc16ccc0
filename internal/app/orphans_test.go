package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// kill -9 of massgen mid-run leaves no MCP server behind: its process
// group has a parent-death signal. On Ctrl+C massgen stops it itself.
func TestMCPServerDiesWithAKilledMassgen(t *testing.T) {
	server := mcpEverything(t)
	if testing.Short() {
		t.Skip("builds the massgen binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		dir := t.TempDir()
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
		killMidRun(t, dir, cfg, pidFile, "MCP server", sig)
	}
}

// killMidRun runs massgen (built now) on cfg, waits until the process
// whose pid lands in pidFile runs, kill -9s massgen and checks that the
// process went with it.
func killMidRun(t *testing.T, dir, cfg, pidFile, what string, sig syscall.Signal) {
	t.Helper()
	bin := filepath.Join(dir, "massgen")
	build := exec.Command("go", "build", "-o", bin, "./cmd/massgen")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
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
		t.Fatalf("the %s never started", what)
	}
	if !alive(pid) {
		t.Fatalf("the %s is not running mid-run", what)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := gone(pid); err != nil {
		t.Errorf("after %v to massgen: %v (an orphan %s)", sig, err, what)
	}
}

// kill -9 of massgen while a custom Python tool runs leaves no runner
// behind either.
func TestPythonToolRunnerDiesWithAKilledMassgen(t *testing.T) {
	needPython(t)
	if testing.Short() {
		t.Skip("builds the massgen binary")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	tool := "import os, time\n\n\ndef napper(pid_file: str) -> str:\n    \"\"\"Sleep long.\"\"\"\n" +
		"    with open(pid_file, \"a\") as f:\n        f.write(str(os.getpid()) + \"\\n\")\n    time.sleep(600)\n    return \"slept\"\n"
	if err := os.WriteFile(filepath.Join(dir, "napper.py"), []byte(tool), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`agent:
  backend:
    type: sim
    scenario:
      models:
        sim:
          steps:
            - calls:
                - {name: custom_tool__napper, arguments: '{"pid_file": %q}'}
            - answer: "done"
    custom_tools:
      - {name: napper, path: napper.py, function: napper}
`, pidFile)
	killMidRun(t, dir, cfg, pidFile, "Python tool runner", syscall.SIGKILL)
}
