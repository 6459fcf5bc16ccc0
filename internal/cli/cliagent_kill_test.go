package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// massgen killed with SIGKILL while a coding-agent CLI works takes the CLI
// and every process it started with it: nothing of the agent runs on.
func TestKilledMassgenLeavesNoCLIProcess(t *testing.T) {
	bin := buildMassgen(t)
	path := clitest.PATH(t, "claude_code")
	srv, url := simtest.Start(t, `models:
  cc-slow:
    steps:
      - answer: first answer from claude
      - fault: hang
`)
	dir := t.TempDir()
	team := fmt.Sprintf(`agents:
  - id: cc
    backend: {type: claude_code, model: cc-slow}
  - id: api
    backend: {type: chatcompletion, model: api, base_url: %q}
`, url)
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(team), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", "team.yaml", "What is 2+2?")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + path, "ANTHROPIC_API_KEY=sk-ant-test", "MASSGEN_CLAUDE_CODE_BASE_URL=" + url}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	hanging := func(rs []llmsim.Record) bool {
		return slices.ContainsFunc(rs, func(r llmsim.Record) bool { return r.Model == "cc-slow" && r.Step == "fault:hang" })
	}
	if err := srv.WaitFor(ctx, hanging); err != nil {
		t.Fatalf("claude's second turn never reached the simulator: %v", err)
	}
	prefix := fmt.Sprintf("massgen-cli-%d-cc-", cmd.Process.Pid)
	procs := processesWith(prefix)
	if len(procs) == 0 {
		t.Fatal("no process of the CLI agent found")
	}
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		alive := slices.DeleteFunc(slices.Clone(procs), func(pid int) bool { return exited(pid) })
		if len(alive) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of the CLI agent outlived massgen's kill -9 by 30 s", alive)
		}
	}
	t.Logf("%d processes of the CLI agent gone %v after kill -9", len(procs), time.Since(killed).Round(time.Millisecond))
}

// processesWith are the processes whose command line or environment
// contains s.
func processesWith(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f)); err == nil && strings.Contains(string(b), s) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// exited reports whether pid is gone (or a zombie waiting to be reaped).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}
