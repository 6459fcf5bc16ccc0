package attack

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	wrapped := fmt.Sprintf("( %s ) > out.txt 2>&1; echo ran > ran.txt", mk(ln.Addr().String()))
	args, _ := json.Marshal(map[string]string{"command": wrapped, "description": "probe"})
	sc := fmt.Sprintf("models:\n  hostile:\n    steps:\n      - calls:\n          - {name: Bash, arguments: '%s'}\n      - answer: \"done\"\n",
		strings.ReplaceAll(string(args), "'", "''"))
	sim := llmsim.New(simtest.Scenario(t, sc))
	srv := &http.Server{Handler: sim.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	base := "http://" + ln.Addr().String() + "/v1"
	b := map[string]any{"type": "claude_code", "model": "hostile", "cwd": "ws"}
	for k, v := range backend {
		b[k] = v
	}
	cfg, _ := json.Marshal(map[string]any{"agent": map[string]any{"id": "solo", "backend": b},
		"ui": map[string]any{"enable_final_presentation": false}})
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), cfg, 0o644))
	r := massgen(t, dir, runOpts{env: []string{"PATH=" + clitest.PATH(t, "claude_code"), "MASSGEN_CLAUDE_CODE_BASE_URL=" + base}},
		"--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
	if r.code != 0 {
		t.Fatalf("the run failed:\n%s", r)
	}
	if _, ran := wsFile(dir, "ran.txt"); !ran {
		t.Fatalf("the probe did not run:\n%s", r)
	}
	out, _ := wsFile(dir, "out.txt")
	t.Logf("output: %s", tail(out, 500))
	return out, r
}

// hostAddr is a non-loopback IPv4 address of this host, or "".
func hostAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
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
			var l *listener
			addr := a.target
			switch a.target {
			case "loopback":
				l = listen(t, "tcp", "127.0.0.1:0")
				addr = l.ln.Addr().String()
			case "address":
				ip := hostAddr()
				if ip == "" {
					t.Skip("the host has no non-loopback address")
				}
				l = listen(t, "tcp", net.JoinHostPort(ip, "0"))
				addr = l.ln.Addr().String()
			}
			out, r := cliProbe(t, dir, func(provider string) string {
				if a.target == "provider" {
					return a.cmd(provider)
				}
				return a.cmd(addr)
			}, nil)
			if l != nil {
				if n := l.conns.Load(); n > 0 {
					t.Errorf("the host's listener %s got %d connection(s); output: %s", addr, n, out)
				}
			}
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
