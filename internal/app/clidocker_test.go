package app

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// A Codex agent in docker mode in a run: its CLI runs in its container
// (the busybox image's shell runs its command), reaches the simulator and
// the workflow server through the relay alone, answers and votes with a
// simulated teammate; the shared Claude login (claude_config) is readable
// in the container, and its content is in no file of the run — the
// workspaces, snapshots, logs — afterwards; no container is left.
func TestCodexInDockerModeInARun(t *testing.T) {
	user := t.TempDir()
	canary := "massgen-canary-" + strings.ReplaceAll(filepath.Base(user), "/", "")
	must(t, os.MkdirAll(filepath.Join(user, ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(user, ".claude", ".credentials.json"), []byte(`{"token":"`+canary+`"}`), 0o600))
	t.Setenv("HOME", user)
	_, srv, work, stderr := runCLIInDocker(t, "codex", `models:
  codex-docker:
    steps:
      - calls:
          - name: exec_command
            arguments: '{"cmd":"readlink /bin/sh > where.txt; wc -c < $HOME/.claude/.credentials.json > cred.txt; echo done"}'
      - answer: "Answered from the container."
`, `agents:
  - id: codex
    backend:
      type: codex
      model: codex-docker
      cwd: ws_codex
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %s
      command_line_docker_credentials:
        mount: [claude_config]
  - id: sim
    backend: {type: sim, model: helper}
`, "Where do you run?")
	if strings.Contains(stderr, "does not apply") || strings.Contains(stderr, "bubblewrap on this machine") {
		t.Errorf("the run says the CLI is not in its container:\n%s", stderr)
	}
	if !slices.ContainsFunc(srv.Requests(), func(r llmsim.Record) bool { return r.Model == "codex-docker" && r.Step == "answer" }) {
		t.Errorf("codex never answered through the workflow tools")
	}
	// Its files: where.txt says busybox (the image's shell, not this
	// machine's), cred.txt the login's size.
	ranInContainer(t, work)
	var cred []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if d.Name() == "cred.txt" {
			cred = append(cred, string(b))
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("the shared login's content is in %s", p)
		}
		return nil
	})
	if want := fmt.Sprintf("%d\n", len(`{"token":"`+canary+`"}`)); len(cred) == 0 || cred[0] != want {
		t.Errorf("cred.txt %q, want %q", cred, want)
	}
	list, err := dockertest.Engine(t).ContainerList(context.Background(), client.ContainerListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if c.Labels["massgen.agent"] == "codex" && strings.Contains(c.Image, "massgen-test") {
			t.Errorf("container %s of agent codex is left (%s)", c.ID, c.State)
		}
	}
}

// A CLI agent whose image the engine cannot have (no registry here) runs
// under bubblewrap instead of failing every task, and the run says so:
// a warning naming the image and why, and the dropped feature in the
// run's outcome.
func TestCLIAgentWhoseImageCannotBePulled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Codex CLI")
	}
	dockertest.Engine(t)
	t.Setenv("PATH", cliPath(t, "codex"))
	_, url := simtest.Start(t, "")
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(`agents:
  - id: codex
    backend:
      type: codex
      model: codex-sim
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: massgen-test/never-built-anywhere:1
`), 0o644))
	out, stderr := runFrom(t, work, cliVars("codex", url), Request{Question: "What is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}})
	if out.Status != "completed" || out.Final == "" {
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr)
	}
	if !strings.Contains(stderr, "massgen-test/never-built-anywhere:1") || !strings.Contains(stderr, "runs under bubblewrap on this machine instead") {
		t.Errorf("the run does not say the CLI left its container:\n%s", stderr)
	}
	if !slices.Contains(out.IgnoredFeatures, "command_line_execution_mode: docker (agent codex)") {
		t.Errorf("ignored features %q lack the container", out.IgnoredFeatures)
	}
}

// runCLIInDocker runs team, a team whose CLI agent of type typ is in
// docker mode (%s: the test image), with the CLI from tests/cli-agents
// on the simulator with scenario, from a new working directory, asking
// question; a run that did not complete with a final answer fails the
// test. It returns the run, the simulator, the working directory and
// what the run wrote on stderr.
func runCLIInDocker(t *testing.T, typ, scenario, team, question string) (*Outcome, *llmsim.Server, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a coding-agent CLI and a container")
	}
	image := dockertest.Image(t)
	dockertest.Engine(t)
	t.Setenv("PATH", cliPath(t, typ))
	srv, url := simtest.Start(t, scenario)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, fmt.Appendf(nil, team, image), 0o644))
	out, stderr := runFrom(t, work, cliVars(typ, url), Request{Question: question, Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 240}})
	if out.Status != "completed" || out.Final == "" {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr)
	}
	return out, srv, work, stderr
}

// cliVars is the environment of a run whose CLI agent of type typ
// (claude_code or codex) talks to the simulator at url: a placeholder for
// its API key and the simulator as its base URL.
func cliVars(typ, url string) map[string]string {
	key := map[string][2]string{"claude_code": {"ANTHROPIC_API_KEY", "sk-ant-test"}, "codex": {"OPENAI_API_KEY", "sk-test"}}[typ]
	return map[string]string{key[0]: key[1], "MASSGEN_" + strings.ToUpper(typ) + "_BASE_URL": url}
}

// ranInContainer fails the test unless the first where.txt under work, a
// command's readlink /bin/sh, says busybox: the image's shell, not this
// machine's.
func ranInContainer(t *testing.T, work string) {
	t.Helper()
	var where []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "where.txt" {
			b, _ := os.ReadFile(p)
			where = append(where, string(b))
		}
		return nil
	})
	if len(where) == 0 || where[0] != "busybox\n" {
		t.Errorf("where.txt %q: the command did not run in the container", where)
	}
}
