package attack

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// py is an execute_command call running a Python script.
func py(script string) call { return sh("python3 - <<'PY'\n" + script + "\nPY") }

// Code-based tools (enable_code_based_tools): the agent's MCP server is
// Python wrappers in its workspace, reached through massgen's hub from
// its sandbox. The wrapper works; the hub refuses a call without the
// token and a tool the agent was not given; the sandbox still reaches no
// other service of the host; a planted link does not make massgen write
// its wrappers outside the workspace.
func TestCodeBasedToolsEscapes(t *testing.T) {
	needBwrap(t)
	needPython(t)
	dir := tempDir(t)
	out := filepath.Join(dir, plantedDir)
	writeFiles(t, out, map[string]string{"keep.txt": "the user's"})
	host := listen(t, "tcp", "127.0.0.1:0") // another service of the host's loopback
	_, port, _ := net.SplitHostPort(host.ln.Addr().String())
	s := team{
		mcp:     evilServer(""),
		backend: map[string]any{"enable_code_based_tools": true},
		coord: []call{
			py("from servers.evil import run\nprint(run('echo code-call-' + 'works'))"),
			py("import os, urllib.request as u\ntry:\n u.urlopen(u.Request(os.environ['MASSGEN_TOOLS_URL'] + '/call', data=b'{\"server\": \"evil\", \"tool\": \"run\", \"arguments\": {\"cmd\": \"id\"}}'))\nexcept Exception as e: print('no-token:', e)"),
			py("import sys; sys.path.insert(0, '.mcp'); import client\nclient.SERVERS['ghost'] = {}\ntry: client.call_mcp_tool('ghost', 'run', {'cmd': 'id'})\nexcept Exception as e: print('not-given:', e)"),
			py("import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port + "), timeout=3); print('CONN' + 'ECTED')\nexcept OSError as e: print('host-service:', e)"),
		},
		present: []call{sh("ls servers/ .mcp/")},
	}
	// A step after those calls (the calls of one response run at once):
	// the links massgen would write through when it writes the wrappers
	// again at the next turn (their files are gone).
	var cfg map[string]any
	must(t, json.Unmarshal(s.yaml(), &cfg))
	hostile := cfg["agent"].(map[string]any)["backend"].(map[string]any)["scenario"].(map[string]any)["models"].(map[string]any)["hostile"].(map[string]any)
	steps := hostile["steps"].([]any)
	plant := map[string]any{"calls": []call{sh("rm -rf servers .mcp && ln -s " + out + " servers && ln -s " + out + " .mcp && echo planted")}}
	hostile["steps"] = append([]any{steps[0], plant}, steps[1:]...)
	b, _ := json.Marshal(cfg)
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), b, 0o644))
	before := snap(t, out)
	r := massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
	attempt(t, "the wrapper calls the server through massgen", func(t *testing.T) {
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		if len(grepTree(filepath.Join(dir, "logs"), "code-call-works")) == 0 {
			t.Error("no tool result in the logs has the wrapper's output")
		}
	})
	attempt(t, "the hub refuses a call without the token", func(t *testing.T) {
		if len(grepTree(filepath.Join(dir, "logs"), "no-token: HTTP Error 401")) == 0 {
			t.Error("no 401 in the logs")
		}
	})
	attempt(t, "the hub refuses a tool the agent was not given", func(t *testing.T) {
		if len(grepTree(filepath.Join(dir, "logs"), "not one of this agent")) == 0 {
			t.Error("no refusal in the logs")
		}
	})
	attempt(t, "the sandbox reaches no other service of the host", func(t *testing.T) {
		if host.conns.Load() > 0 || len(grepTree(filepath.Join(dir, "logs"), "CONNECTED")) > 0 {
			t.Error("the host's listener was reached")
		}
		if len(grepTree(filepath.Join(dir, "logs"), "host-service:")) == 0 {
			t.Error("the attempt did not run")
		}
	})
	attempt(t, "a planted link does not make massgen write outside", func(t *testing.T) {
		if len(grepTree(filepath.Join(dir, "logs"), "planted")) == 0 {
			t.Error("the link was not planted")
		}
		if !strings.Contains(r.stderr, "code-based tools: writing") || !strings.Contains(r.stderr, "leads out of") {
			t.Errorf("no refused write of the wrappers: %s", r)
		}
		unchanged(t, "the planted directory", out, before)
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".py") || e.Name() == "evil" || e.Name() == "servers.json" {
				t.Errorf("massgen wrote %s outside the workspace", e.Name())
			}
		}
	})
	noCanary(t, r)
}
