package localmodel

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen/massgen"
	_ "github.com/massgen/massgen/providers/chatcompat"
)

// venvPython is the Python of the local-model virtualenv, made by venv.sh
// if need be (a few minutes on a first run).
func venvPython(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no local model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "venv.sh").Output()
	if err != nil {
		msg := fmt.Sprintf("the local-model virtualenv could not be made (bash tests/localmodel/venv.sh): %v", err)
		if ee, ok := err.(*exec.ExitError); ok {
			msg += "\n" + string(ee.Stderr)
		}
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "bin", "python")
}

// startLlamaServer serves SmolLM2 with llama.cpp on a free loopback port
// until the test ends, and returns its base URL (…/v1).
func startLlamaServer(t *testing.T) string {
	t.Helper()
	python := venvPython(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(python, "serve.py", fmt.Sprint(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				ready <- url
			}
		}
		close(ready)
	}()
	select {
	case url, ok := <-ready:
		if !ok {
			t.Fatalf("llama.cpp's server exited before it listened:\n%s", logs.String())
		}
		return strings.TrimRight(url, "/") + "/v1"
	case <-time.After(2 * time.Minute):
		t.Fatalf("llama.cpp's server did not listen within 2 minutes:\n%s", logs.String())
	}
	return ""
}

// runTeam runs a config against the local model within limit and reports
// the wall time.
func runTeam(t *testing.T, config string, limit time.Duration) *massgen.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	res, err := massgen.Run(ctx, "What is the capital of France?", massgen.Options{
		ConfigYAML: []byte(config), NoLogs: true, WorkDir: t.TempDir(), Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatalf("run did not start: %v", err)
	}
	took := time.Since(start)
	t.Logf("wall time %.1f s; status %s, winner %s, votes %v, answer %q", took.Seconds(), res.Status, res.Winner, res.Votes, res.Answer)
	if res.Status != massgen.Completed || strings.TrimSpace(res.Answer) == "" {
		t.Fatalf("run did not complete with an answer: status %s, error %v, failures %+v", res.Status, res.Err, res.Failures)
	}
	return res
}

// The llama.cpp server's chat template drops tools, and /props says so:
// the default workflow_actions (auto) finds that out and asks through a
// grammar. One agent, then a team on the local backend types.
func TestLocalModelSingleAgentAndTeam(t *testing.T) {
	base := startLlamaServer(t)
	single := fmt.Sprintf(`
agents:
  - id: solo
    backend: {type: chatcompletion, model: smollm2-135m, base_url: %q, max_tokens: 400}
orchestrator:
  max_new_answers_per_agent: 1
timeout_settings:
  orchestrator_timeout_seconds: 600
`, base)
	t.Run("single agent", func(t *testing.T) {
		res := runTeam(t, single, 10*time.Minute)
		if res.Winner != "solo" {
			t.Errorf("winner %q, want solo", res.Winner)
		}
	})
	team := fmt.Sprintf(`
agents:
  - id: lm
    backend: {type: lmstudio, model: smollm2-135m, base_url: %[1]q, max_tokens: 400}
  - id: vl
    backend: {type: vllm, model: smollm2-135m, base_url: %[1]q, max_tokens: 400}
  - id: sg
    backend: {type: sglang, model: smollm2-135m, base_url: %[1]q, max_tokens: 400}
orchestrator:
  max_new_answers_per_agent: 1
  answer_novelty_requirement: lenient
timeout_settings:
  orchestrator_timeout_seconds: 900
`, base)
	t.Run("three-agent team", func(t *testing.T) {
		res := runTeam(t, team, 15*time.Minute)
		votes := 0
		for _, n := range res.Votes {
			votes += n
		}
		if res.Winner == "" || votes == 0 {
			t.Errorf("the team decided without votes: winner %q, votes %v", res.Winner, res.Votes)
		}
	})
}
