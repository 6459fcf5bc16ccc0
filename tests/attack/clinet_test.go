package attack

import (
	"net"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
)

// cliProbe runs cmd by Claude Code's Bash tool, as a claude_code agent of
// a real massgen run does when its model (the simulator, here hostile)
// asks, with its output in out.txt of the workspace. The CLI's endpoint
// is a simulator of this test process (MASSGEN_CLAUDE_CODE_BASE_URL), so
// the provider is a service on the host's loopback too; its key is the
// canary of massgen's environment. It returns that output and the run.
func cliProbe(t *testing.T, dir string, mk func(provider string) string, backend map[string]any) (string, result) {
	t.Helper()
	// The scenario may name the simulator's own address: its listener
	// comes first.
	ln := loopback(t)
	base := simServe(t, ln, hostileScenario(
		callStep("Bash", map[string]string{"command": probeWrap(mk(ln.Addr().String())), "description": "probe"}), answerStep))
	r := cliRun(t, dir, "claude_code", base, backend, nil)
	return probeOutput(t, dir, r), r
}

// Class 12: a coding-agent CLI's network is limited to what massgen
// names (its provider, massgen's workflow server): a command its model
// has it run reaches no other service of the host — on its loopback, on
// a non-loopback address, the provider's own address — no cloud
// metadata, no name server, and never sees the provider's key.
func TestCLINetwork(t *testing.T) {
	needBwrap(t)
	clitest.Program(t, "claude_code")
	bashTCP := func(hostport string) string {
		h, p, _ := net.SplitHostPort(hostport)
		return "bash -c 'exec 3<>/dev/tcp/" + h + "/" + p + " && echo connected && cat <&3'"
	}
	type cliAttack struct {
		target string // "loopback", "address", "provider", or a fixed address
		cmd    func(addr string) string
	}
	attacks := map[string]cliAttack{
		"TCP to the host's 127.0.0.1 (bash /dev/tcp)":      {"loopback", bashTCP},
		"TCP to the host's 127.0.0.1 (curl)":               {"loopback", func(a string) string { return "curl -s --max-time 3 http://" + a + "/" }},
		"TCP to a non-loopback address of the host":        {"address", bashTCP},
		"TCP to the provider's own address, not its route": {"provider", bashTCP},
		"HTTP to cloud metadata (169.254.169.254)": {"169.254.169.254:80", func(a string) string {
			return "curl -s --max-time 3 http://" + a + "/latest/meta-data/ && echo connected"
		}},
		"a name server (getent hosts example.com)":          {"", func(string) string { return "getent hosts example.com && echo connected" }},
		"the provider's key from the CLI's environment":     {"", func(string) string { return "env; cat $HOME/.claude.json $HOME/.claude/* 2>/dev/null" }},
		"the provider's key from the CLI's process (/proc)": {"", func(string) string { return "for f in /proc/*/environ /proc/*/cmdline; do cat $f; echo; done" }},
	}
	for name, a := range attacks {
		attempt(t, "claude_code: "+name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			l, addr := hostTarget(t, a.target)
			out, r := cliProbe(t, dir, func(provider string) string {
				if a.target == "provider" {
					return a.cmd(provider)
				}
				return a.cmd(addr)
			}, nil)
			noConnections(t, l, addr, out)
			if strings.Contains(out, "connected") || strings.Contains(out, "HOST-SOCKET-ANSWER") {
				t.Errorf("the command got through: %s", out)
			}
			if strings.Contains(name, "key") && !strings.Contains(out, "massgen-sandbox-key-") {
				t.Errorf("the CLI's environment does not hold the stand-in key: %s", tail(out, 400))
			}
			noCanary(t, r)
		})
	}
}
