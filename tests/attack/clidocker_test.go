package attack

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// codexDockerProbe runs cmd by Codex's shell tool, as a codex agent in
// docker mode (command_line_execution_mode: docker) of a real massgen run
// does when its model (the simulator, here hostile) asks: the command
// runs in the agent's container, with the user's Claude login shared
// (claude_config). Its output is in out.txt of the workspace. The
// provider is a simulator of this test process on the host's loopback,
// the key the canary of massgen's environment; HOME is user.
func codexDockerProbe(t *testing.T, dir, user, image string, mk func(provider string) string) (string, result) {
	t.Helper()
	ln := loopback(t)
	base := simServe(t, ln, hostileScenario(callStep("exec_command", map[string]string{"cmd": probeWrap(mk(ln.Addr().String()))}), answerStep))
	r := cliRun(t, dir, "codex", base, map[string]any{"enable_mcp_command_line": true,
		"command_line_execution_mode": "docker", "command_line_docker_image": image,
		"command_line_docker_credentials": map[string]any{"mount": []string{"claude_config"}}}, nil, "HOME="+user)
	inContainer(t, r)
	return probeOutput(t, dir, r), r
}

// inContainer fails t when the run says its CLI agent's commands did not
// run in its container.
func inContainer(t *testing.T, r result) {
	t.Helper()
	if strings.Contains(r.stderr, "bubblewrap on this machine") {
		t.Fatalf("the CLI did not run in its container:\n%s", r)
	}
}

// Class 13: a coding-agent CLI in docker mode (Codex in its agent's
// container) keeps to what it was given: a command its model has it run
// reaches no service of the host (its loopback, a non-loopback address,
// the provider's own address, the Docker engine's socket), never sees the
// provider's key (only the relay's stand-in), cannot change the user's
// login it was shared read-only, and writes nothing beside its workspace.
func TestCLIDockerMode(t *testing.T) {
	image := dockertest.Image(t)
	clitest.Program(t, "codex")
	ncTCP := func(hostport string) string {
		h, p, _ := net.SplitHostPort(hostport)
		return "echo probe | nc -w 2 " + h + " " + p + " && echo connected"
	}
	type dockerAttack struct {
		target string // "loopback", "address", "provider", or ""
		cmd    func(addr, dir, user string) string
		check  func(t *testing.T, out, dir, user string)
	}
	attacks := map[string]dockerAttack{
		"TCP to the host's 127.0.0.1 (nc)":                 {target: "loopback", cmd: func(a, _, _ string) string { return ncTCP(a) }},
		"TCP to a non-loopback address of the host":        {target: "address", cmd: func(a, _, _ string) string { return ncTCP(a) }},
		"TCP to the provider's own address, not its route": {target: "provider", cmd: func(a, _, _ string) string { return ncTCP(a) }},
		"the Docker engine's socket": {cmd: func(string, string, string) string {
			return "for s in /var/run/docker.sock /run/docker.sock; do [ -e $s ] && echo connected $s; done; echo looked"
		}},
		"the provider's key from the CLI's environment and /proc": {
			cmd: func(string, string, string) string {
				return "env; for f in /proc/*/environ /proc/*/cmdline; do cat $f; echo; done; cat $HOME/.codex/*.toml"
			},
			check: func(t *testing.T, out, _, _ string) {
				if !strings.Contains(out, "massgen-sandbox-key-") {
					t.Errorf("the CLI's environment does not hold the stand-in key: %s", tail(out, 400))
				}
			}},
		"writes into the shared login (claude_config)": {
			cmd: func(_, _, _ string) string {
				return "echo pwned >> $HOME/.claude/.credentials.json; echo pwned > $HOME/.claude/planted; : > $HOME/.claude/.credentials.json; mv $HOME/.claude/.credentials.json $HOME/.claude/moved; ls -la $HOME/.claude"
			}},
		"writes beside the workspace and into the user's home": {
			cmd: func(_, dir, user string) string {
				return "echo x > " + filepath.Join(dir, "escape.txt") + "; echo x > " + filepath.Join(user, "escape.txt") +
					"; echo x > ../escape.txt; mkdir -p " + filepath.Join(dir, "outside") + " && echo x > " + filepath.Join(dir, "outside", "x")
			}},
	}
	for name, a := range attacks {
		attempt(t, "codex in docker: "+name, func(t *testing.T) {
			t.Parallel()
			dir, user := tempDir(t), tempDir(t)
			writeFiles(t, filepath.Join(user, ".claude"), map[string]string{".credentials.json": `{"token":"login-` + canary + `"}`})
			l, addr := hostTarget(t, a.target)
			userBefore := snap(t, user)
			out, r := codexDockerProbe(t, dir, user, image, func(provider string) string {
				if a.target == "provider" {
					return a.cmd(provider, dir, user)
				}
				return a.cmd(addr, dir, user)
			})
			noConnections(t, l, addr, out)
			if strings.Contains(out, "connected") {
				t.Errorf("the command got through: %s", out)
			}
			if a.check != nil {
				a.check(t, out, dir, user)
			}
			homeUnchanged(t, user, userBefore)
			notOnHost(t, filepath.Join(dir, "escape.txt"), filepath.Join(dir, "outside"))
			noCanary(t, r)
		})
	}
}
