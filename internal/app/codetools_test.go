package app

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// Code-based tools end to end on the simulator: the agent's MCP server
// (server-everything) is not offered as function calls, its tools are
// Python wrappers in the workspace, and a script the agent runs with
// execute_command calls echo through massgen and prints the result. A
// direct_mcp_servers server stays a function-calling tool. The attempts:
// a call with no token, a tool the agent's exclude_tools took away, and a
// connection to another service of the host from the sandbox are all
// refused, and the user's files outside are unchanged.
func TestCodeBasedToolsRunThroughExecuteCommand(t *testing.T) {
	if _, err := sandbox.Bwrap(); err != nil {
		t.Skip(err)
	}
	everything := mcpEverything(t)
	fs := npmServer(t, "mcp-server-filesystem")
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
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: coder
      cwd: ws
      enable_mcp_command_line: true
      enable_code_based_tools: true
      direct_mcp_servers: [fs]
      exclude_tools: [get-sum]
      mcp_servers:
        everything: {command: %[1]q, args: ["stdio"]}
        fs: {command: %[2]q, args: ["."]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          coder:
            steps:
              - calls:
                  - {name: mcp__everything__echo, arguments: '{"message": "direct"}'}
                  - {name: mcp__fs__list_directory, arguments: '{"path": "."}'}
                  - %[3]s
                  - %[4]s
                  - %[5]s
                  - %[6]s
              - expect_results:
                  - {name: mcp__everything__echo, contains: 'mcp__everything__echo" is not available'}
                  - {name: mcp__fs__list_directory, contains: "servers"}
                  - {name: execute_command, contains: "Echo: hello from code"}
                  - {name: execute_command, contains: "not one of this agent's tools"}
                  - {name: execute_command, contains: "HTTP Error 401"}
                  - {name: execute_command, contains: "refused-or-unreachable"}
                answer: "Called echo from code."
              - when: coordination
                vote: agent1
  - id: b
    backend:
      type: sim
      model: other
      scenario:
        defaults: {ttft_ms: 0}
        models:
          other:
            steps:
              - answer: "B answers."
              - when: coordination
                vote: agent1
`, everything, fs,
		run("from servers.everything import echo; print(echo('hello from code'))"),
		run("import sys; sys.path.insert(0, '.mcp'); from client import call_mcp_tool; call_mcp_tool('everything', 'get-sum', {'a': 1, 'b': 2})"),
		run("import os, urllib.request as u; u.urlopen(u.Request(os.environ['MASSGEN_TOOLS_URL'] + '/call', data=b'{}'))"),
		run("import socket\ntry:\n socket.create_connection(('127.0.0.1', "+port+"), timeout=3); print('CONNECTED')\nexcept OSError: print('refused-or-unreachable')"))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Use the tools.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if out.Status != "completed" || out.Winner != "a" {
		ev, _ := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
		t.Fatalf("status %s, winner %q, err %v; stderr:\n%s\nevents:\n%s", out.Status, out.Winner, out.Err, stderr.String(), ev)
	}
	ws := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	for _, f := range []string{"servers/everything/echo.py", "servers/__init__.py", ".mcp/client.py", ".mcp/servers.json"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"servers/everything/get_sum.py", "servers/fs"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was written: an excluded tool and a direct server have no wrapper", f)
		}
	}
	if js, _ := os.ReadFile(filepath.Join(ws, ".mcp/servers.json")); strings.Contains(string(js), everything) {
		t.Errorf("servers.json holds the server's command: %s", js)
	}
	ln.Close()
	<-done
	if len(accepted) > 0 {
		t.Error("a service on the host's loopback was reached from the sandbox")
	}
	wstest.Unchanged(t, outside, before)
}
