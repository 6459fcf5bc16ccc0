package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// Code-based tools in docker mode, end to end on the simulator: each
// agent's wrappers run in its container (the test image: busybox, no
// Python of its own, so the host's is shown) and call server-everything's
// echo through massgen — the container's only way out is the relay to the
// hub. Agent b's wrappers are in the shared tools directory, found through
// PYTHONPATH. The attempts from inside: a call without the token (401 from
// the hub, through the relay), a service on the host's loopback, and the
// hub's real address (its port on the host) reach nothing, and no
// container is left after the run.
func TestCodeBasedToolsInDockerContainers(t *testing.T) {
	image := dockertest.Image(t)
	cli := dockertest.Engine(t)
	everything := mcpEverything(t)
	fixedRunName(t)
	work := t.TempDir()
	outside, before := userFiles(t, work)
	host := listenOnHost(t)
	// The hub's port on the host is in no command's environment; the
	// script looks for it the way an agent could, among the host's
	// listening ports it can read about, and tries each (none is there).
	hubHunt := pythonCall("import socket\nports = set()\nfor f in ('/proc/net/tcp',):\n try:\n  for l in open(f).read().split('\\n')[1:]:\n   p = l.split()\n   if len(p) > 3 and p[3] == '0A': ports.add(int(p[1].split(':')[1], 16))\n except OSError: pass\nhits = []\nfor p in sorted(ports):\n try:\n  socket.create_connection(('127.0.0.1', p), timeout=2); hits.append(p)\n except OSError: pass\nimport os\nrelay = int(os.environ['MASSGEN_TOOLS_URL'].rsplit(':', 1)[1].split('/')[0])\nprint('OTHER-PORTS', [p for p in hits if p != relay])")
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: coder
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %[2]s
      enable_code_based_tools: true
      mcp_servers:
        everything: {command: %[1]q, args: ["stdio"]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          coder:
            steps:
              - calls:
                  - %[3]s
                  - %[4]s
                  - %[5]s
                  - %[6]s
              - expect_results:
                  - {name: execute_command, contains: "Echo: hello from the container"}
                  - {name: execute_command, contains: "HTTP Error 401"}
                  - {name: execute_command, contains: "refused-or-unreachable"}
                  - {name: execute_command, contains: "OTHER-PORTS []"}
                answer: "Called echo from the container."
              - when: coordination
                vote: agent1
  - id: b
    backend:
      type: sim
      model: shared
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %[2]s
      enable_code_based_tools: true
      shared_tools_directory: shared_tools
      mcp_servers:
        everything: {command: %[1]q, args: ["stdio"]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          shared:
            steps:
              - calls:
                  - %[7]s
              - expect_results:
                  - {name: execute_command, contains: "Echo: shared hello"}
                answer: "B called echo from the shared tools."
              - when: coordination
                vote: agent1
`, everything, image,
		pythonCall("from servers.everything import echo; print(echo('hello from the container'))"),
		pythonCall(noTokenCall), connectCall(host.port), hubHunt,
		pythonCall("import os; from servers.everything import echo; print(echo('shared hello'), os.path.exists('servers'))"))
	out, stderr := runYAML(t, work, "Use the tools.", yaml, 180)
	wantWinner(t, out, stderr, "a")
	if strings.Contains(stderr, "code-based tools") {
		t.Errorf("a warning about code-based tools:\n%s", stderr)
	}
	ws := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wantFiles(t, ws, "servers/everything/echo.py", ".mcp/client.py")
	noFiles(t, filepath.Join(work, ".massgen", "workspaces", "run1"), "is there: agent b's wrappers belong in the shared tools directory", "b/servers")
	if host.reached() {
		t.Error("a service on the host's loopback was reached from a container")
	}
	wstest.Unchanged(t, outside, before)
	noContainerLeft(t, cli, work)
}
