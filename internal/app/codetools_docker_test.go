package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

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
	outside := filepath.Join(work, "outside")
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("the user's"), 0o644))
	before := wstest.Snapshot(t, outside)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	accepted := make(chan struct{}, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	run := func(py string) string {
		args, _ := json.Marshal(map[string]string{"command": "python3 - <<'PY'\n" + py + "\nPY"})
		return "{name: execute_command, arguments: '" + strings.ReplaceAll(string(args), "'", "''") + "'}"
	}
	connect := func(port string) string {
		return run("import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port + "), timeout=3); print('CONNECTED')\nexcept OSError: print('refused-or-unreachable')")
	}
	// The hub's port on the host is in no command's environment; the
	// script looks for it the way an agent could, among the host's
	// listening ports it can read about, and tries each (none is there).
	hubHunt := run("import socket\nports = set()\nfor f in ('/proc/net/tcp',):\n try:\n  for l in open(f).read().split('\\n')[1:]:\n   p = l.split()\n   if len(p) > 3 and p[3] == '0A': ports.add(int(p[1].split(':')[1], 16))\n except OSError: pass\nhits = []\nfor p in sorted(ports):\n try:\n  socket.create_connection(('127.0.0.1', p), timeout=2); hits.append(p)\n except OSError: pass\nimport os\nrelay = int(os.environ['MASSGEN_TOOLS_URL'].rsplit(':', 1)[1].split('/')[0])\nprint('OTHER-PORTS', [p for p in hits if p != relay])")
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
		run("from servers.everything import echo; print(echo('hello from the container'))"),
		run("import os, urllib.request as u; u.urlopen(u.Request(os.environ['MASSGEN_TOOLS_URL'] + '/call', data=b'{}'))"),
		connect(port), hubHunt,
		run("import os; from servers.everything import echo; print(echo('shared hello'), os.path.exists('servers'))"))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Use the tools.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 180}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if out.Status != "completed" || out.Winner != "a" {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, winner %q, err %v; stderr:\n%s", out.Status, out.Winner, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "code-based tools") {
		t.Errorf("a warning about code-based tools:\n%s", stderr.String())
	}
	ws := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	for _, f := range []string{"servers/everything/echo.py", ".mcp/client.py"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("agent a's %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, ".massgen", "workspaces", "run1", "b", "servers")); err == nil {
		t.Error("agent b's wrappers are in its workspace, not the shared tools directory")
	}
	ln.Close()
	<-done
	if len(accepted) > 0 {
		t.Error("a service on the host's loopback was reached from a container")
	}
	wstest.Unchanged(t, outside, before)
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", "massgen.agent")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		for _, m := range c.Mounts {
			if strings.HasPrefix(m.Source, work) {
				t.Errorf("container %s of this run is still there after it ended", c.ID)
			}
		}
	}
}
