package attack

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// Code-based tools in docker mode: the wrappers run in the agent's
// container (busybox, the host's Python shown) and reach massgen's hub
// only through the relay massgen runs in the container. From inside: a
// call without the token, another service of the host's loopback, and the
// relay's own pipes — forged frames on its output (a stream to an endpoint
// that does not exist, then a flood past what massgen holds) — get
// nothing: refused, unreachable, or the tunnel torn down while the run goes
// on and ends normally.
func TestCodeBasedToolsInDockerEscapes(t *testing.T) {
	needPython(t)
	image := dockertest.Image(t)
	dir := tempDir(t)
	host := listen(t, "tcp", "127.0.0.1:0") // another service of the host's loopback
	_, port, _ := net.SplitHostPort(host.ln.Addr().String())
	// The relay's process, found in the container, and its standard
	// output, which massgen reads as the tunnel.
	forge := "import os, struct, glob\n" +
		"pid = [p.split('/')[2] for p in glob.glob('/proc/[0-9]*/cmdline') if b'__massgen_sandbox_tunnel__' in open(p, 'rb').read()]\n" +
		"print('relay', pid)\n" +
		"f = open('/proc/%s/fd/1' % pid[0], 'wb', buffering=0)\n" +
		"f.write(struct.pack('<IBI', 900, 1, 4) + struct.pack('<I', 7) + struct.pack('<IBI', 900, 2, 5) + b'hello')\n" +
		"print('forged-open')\n" +
		"try:\n for i in range(3000): f.write(struct.pack('<IBI', 901, 2, 32768) + bytes(32768))\n" +
		"except OSError as e: print('flood-stopped:', e)\n" +
		"print('flooded')"
	s := team{
		mcp: evilServer(""),
		backend: map[string]any{"enable_code_based_tools": true, "command_line_execution_mode": "docker",
			"command_line_docker_image": image},
		coord: []call{
			py("from servers.evil import run\nprint(run('echo code-call-' + 'works'))"),
			py("import os, urllib.request as u\ntry:\n u.urlopen(u.Request(os.environ['MASSGEN_TOOLS_URL'] + '/call', data=b'{\"server\": \"evil\", \"tool\": \"run\", \"arguments\": {\"cmd\": \"id\"}}'))\nexcept Exception as e: print('no-token:', e)"),
			py("import socket\ntry:\n socket.create_connection(('127.0.0.1', " + port + "), timeout=3); print('CONN' + 'ECTED')\nexcept OSError as e: print('host-service:', e)"),
		},
		present:      []call{py(forge)},
		presentSteps: [][]call{{py("from servers.evil import run\ntry: print(run('echo after-' + 'flood'))\nexcept Exception as e: print('after-flood-refused:', e)")}},
	}
	r := runTeam(t, dir, s, runOpts{})
	logs := filepath.Join(dir, "logs")
	attempt(t, "docker: the wrapper calls the server through massgen's relay", func(t *testing.T) {
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		if len(grepTree(logs, "code-call-works")) == 0 {
			t.Errorf("no tool result has the wrapper's output:\n%s", r)
		}
	})
	attempt(t, "docker: the hub refuses a call without the token, through the relay", func(t *testing.T) {
		if len(grepTree(logs, "no-token: HTTP Error 401")) == 0 {
			t.Error("no 401 in the logs")
		}
	})
	attempt(t, "docker: the container reaches no other service of the host", func(t *testing.T) {
		if host.conns.Load() > 0 || len(grepTree(logs, "CONNECTED")) > 0 {
			t.Error("the host's listener was reached")
		}
		if len(grepTree(logs, "host-service:")) == 0 {
			t.Error("the attempt did not run")
		}
	})
	attempt(t, "docker: forged and flooding frames on the relay's output", func(t *testing.T) {
		if len(grepTree(logs, "forged-open")) == 0 {
			t.Skipf("the relay's output could not be opened from the container (the attempt did not run):\n%s", r)
		}
		if r.code != 0 || !strings.Contains(r.stdout, "final") {
			t.Errorf("the run did not end normally after the flood: %s", r)
		}
		if len(grepTree(logs, "after-flood")) == 0 {
			t.Error("the call after the flood neither worked nor failed: it hung")
		}
	})
	noCanary(t, r)
}
