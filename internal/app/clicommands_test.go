package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// A Claude Code agent in docker mode, as upstream runs it: the CLI on this
// machine, its commands in the agent's container. Its own Bash is not
// offered; massgen's execute_command is (over MCP), and the command it
// runs sees the image's shell (busybox), writing into its workspace.
func TestClaudeCodeInDockerModeRunsItsCommandsInTheContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Claude Code and a container")
	}
	image := dockertest.Image(t)
	dockertest.Engine(t)
	t.Setenv("PATH", cliPath(t, "claude_code"))
	srv, url := simtest.Start(t, `models:
  cc-docker:
    steps:
      - calls:
          - {name: execute_command, arguments: '{"command": "readlink /bin/sh > where.txt; echo ran-in-container"}'}
      - expect_results:
          - {name: execute_command, contains: "ran-in-container"}
        answer: "My command ran in the container."
`)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`agents:
  - id: claude
    backend:
      type: claude_code
      model: cc-docker
      cwd: ws_claude
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %s
  - id: sim
    backend: {type: sim, model: helper}
`, image)), 0o644))
	vars := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "MASSGEN_CLAUDE_CODE_BASE_URL": url}
	var stderr strings.Builder
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Where do your commands run?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 240}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final == "" {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "bubblewrap on this machine") {
		t.Errorf("the run says the commands are not in the container:\n%s", stderr.String())
	}
	var asked bool
	for _, r := range srv.Requests() {
		if r.Model != "cc-docker" || r.Step == "text" {
			continue
		}
		asked = true
		if slices.Contains(r.Tools, "Bash") || !slices.Contains(r.Tools, "mcp__massgen_tools__execute_command") {
			t.Errorf("claude's request %s offers %v: want massgen's execute_command and not Bash", r.Step, r.Tools)
		}
		if r.Problem != "" {
			t.Errorf("the simulator refused claude's request: %s", r.Problem)
		}
	}
	if !asked || !slices.ContainsFunc(srv.Requests(), func(r llmsim.Record) bool { return r.Model == "cc-docker" && r.Step == "answer" }) {
		t.Fatal("claude never answered")
	}
	var where []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "where.txt" {
			b, _ := os.ReadFile(p)
			where = append(where, string(b))
		}
		return nil
	})
	if len(where) == 0 || where[0] != "busybox\n" {
		t.Errorf("where.txt %q: the command did not run in the container", where)
	}
}
