package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	outside, before := userFiles(t, work)
	host := listenOnHost(t)
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
`+teammateB, everything, fs,
		pythonCall("from servers.everything import echo; print(echo('hello from code'))"),
		pythonCall("import sys; sys.path.insert(0, '.mcp'); from client import call_mcp_tool; call_mcp_tool('everything', 'get-sum', {'a': 1, 'b': 2})"),
		pythonCall(noTokenCall), connectCall(host.port))
	out, stderr := runYAML(t, work, "Use the tools.", yaml, 120)
	wantWinner(t, out, stderr, "a")
	ws := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wantFiles(t, ws, "servers/everything/echo.py", "servers/__init__.py", ".mcp/client.py", ".mcp/servers.json")
	noFiles(t, ws, "was written: an excluded tool and a direct server have no wrapper", "servers/everything/get_sum.py", "servers/fs")
	if js, _ := os.ReadFile(filepath.Join(ws, ".mcp/servers.json")); strings.Contains(string(js), everything) {
		t.Errorf("servers.json holds the server's command: %s", js)
	}
	if host.reached() {
		t.Error("a service on the host's loopback was reached from the sandbox")
	}
	wstest.Unchanged(t, outside, before)
}

// teammateB is agent b of a team whose scenario is agent a's: a simulated
// agent that answers and votes for a (agent1).
const teammateB = `  - id: b
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
`

// execCall is a simulated call of execute_command running command, as a
// YAML flow mapping.
func execCall(command string) string {
	return `{name: execute_command, arguments: '{"command": ` + jsonString(command) + `}'}`
}

// pythonCall is a simulated execute_command call that runs the script py
// with python3.
func pythonCall(py string) string {
	return execCall("python3 - <<'PY'\n" + py + "\nPY")
}

// noTokenCall is a script that calls the tools' hub without its token.
const noTokenCall = "import os, urllib.request as u; u.urlopen(u.Request(os.environ['MASSGEN_TOOLS_URL'] + '/call', data=b'{}'))"

// connectCall is a simulated execute_command call that tries the host's
// loopback port and prints CONNECTED or refused-or-unreachable.
func connectCall(port string) string {
	return pythonCall("import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port + "), timeout=3); print('CONNECTED')\nexcept OSError: print('refused-or-unreachable')")
}

// userFiles makes work/outside, a directory of the user's with a file in
// it, and returns it with its snapshot, for wstest.Unchanged after the run.
func userFiles(t *testing.T, work string) (string, wstest.Tree) {
	t.Helper()
	outside := filepath.Join(work, "outside")
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("the user's"), 0o644))
	return outside, wstest.Snapshot(t, outside)
}

// hostService is a service on the host's loopback that counts the
// connections it accepts: one a sandboxed command must not reach.
type hostService struct {
	port     string
	ln       net.Listener
	accepted atomic.Int32
	done     chan struct{}
}

// listenOnHost starts a hostService; it is closed when the test ends.
func listenOnHost(t *testing.T) *hostService {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostService{ln: ln, done: make(chan struct{})}
	_, h.port, _ = net.SplitHostPort(ln.Addr().String())
	go func() {
		defer close(h.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return h
}

// reached closes the service and reports whether anything connected to it.
func (h *hostService) reached() bool {
	h.ln.Close()
	<-h.done
	return h.accepted.Load() > 0
}

// wantFiles fails the test for each of files (slash paths under dir) that
// is not there.
func wantFiles(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// noFiles fails the test for each of files (slash paths under dir) that
// is there, saying why it should not be.
func noFiles(t *testing.T, dir, why string, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s %s", f, why)
		}
	}
}
