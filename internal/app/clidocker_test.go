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
	if testing.Short() {
		t.Skip("starts the Codex CLI in a container")
	}
	image := dockertest.Image(t)
	engine := dockertest.Engine(t)
	t.Setenv("PATH", cliPath(t, "codex"))
	user := t.TempDir()
	canary := "massgen-canary-" + strings.ReplaceAll(filepath.Base(user), "/", "")
	must(t, os.MkdirAll(filepath.Join(user, ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(user, ".claude", ".credentials.json"), []byte(`{"token":"`+canary+`"}`), 0o600))
	t.Setenv("HOME", user)
	srv, url := simtest.Start(t, `models:
  codex-docker:
    steps:
      - calls:
          - name: exec_command
            arguments: '{"cmd":"readlink /bin/sh > where.txt; wc -c < $HOME/.claude/.credentials.json > cred.txt; echo done"}'
      - answer: "Answered from the container."
`)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`agents:
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
`, image)), 0o644))
	vars := map[string]string{"OPENAI_API_KEY": "sk-test", "MASSGEN_CODEX_BASE_URL": url}
	var stderr strings.Builder
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Where do you run?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 240}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final == "" {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "does not apply") || strings.Contains(stderr.String(), "bubblewrap on this machine") {
		t.Errorf("the run says the CLI is not in its container:\n%s", stderr.String())
	}
	if !slices.ContainsFunc(srv.Requests(), func(r llmsim.Record) bool { return r.Model == "codex-docker" && r.Step == "answer" }) {
		t.Errorf("codex never answered through the workflow tools")
	}
	// Its files: where.txt says busybox (the image's shell, not this
	// machine's), cred.txt the login's size.
	var where, cred []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		switch d.Name() {
		case "where.txt":
			where = append(where, string(b))
		case "cred.txt":
			cred = append(cred, string(b))
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("the shared login's content is in %s", p)
		}
		return nil
	})
	if len(where) == 0 || where[0] != "busybox\n" {
		t.Errorf("where.txt %q: the command did not run in the container", where)
	}
	if want := fmt.Sprintf("%d\n", len(`{"token":"`+canary+`"}`)); len(cred) == 0 || cred[0] != want {
		t.Errorf("cred.txt %q, want %q", cred, want)
	}
	list, err := engine.ContainerList(context.Background(), client.ContainerListOptions{All: true})
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
	vars := map[string]string{"OPENAI_API_KEY": "sk-test", "MASSGEN_CODEX_BASE_URL": url}
	var stderr strings.Builder
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final == "" {
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "massgen-test/never-built-anywhere:1") || !strings.Contains(stderr.String(), "runs under bubblewrap on this machine instead") {
		t.Errorf("the run does not say the CLI left its container:\n%s", stderr.String())
	}
	if !slices.Contains(out.IgnoredFeatures, "command_line_execution_mode: docker (agent codex)") {
		t.Errorf("ignored features %q lack the container", out.IgnoredFeatures)
	}
}
