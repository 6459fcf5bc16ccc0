package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
)

// A Claude Code agent in docker mode, as upstream runs it: the CLI on this
// machine, its commands in the agent's container. Its own Bash is not
// offered; massgen's execute_command is (over MCP), and the command it
// runs sees the image's shell (busybox), writing into its workspace.
func TestClaudeCodeInDockerModeRunsItsCommandsInTheContainer(t *testing.T) {
	_, srv, work, stderr := runCLIInDocker(t, "claude_code", `models:
  cc-docker:
    steps:
      - calls:
          - {name: execute_command, arguments: '{"command": "readlink /bin/sh > where.txt; echo ran-in-container"}'}
      - expect_results:
          - {name: execute_command, contains: "ran-in-container"}
        answer: "My command ran in the container."
`, `agents:
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
`, "Where do your commands run?")
	if strings.Contains(stderr, "bubblewrap on this machine") {
		t.Errorf("the run says the commands are not in the container:\n%s", stderr)
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
	ranInContainer(t, work)
}
