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
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// The scaffolding of the attacks on coding-agent CLIs (clinet_test.go,
// clidocker_test.go, clikit_test.go, clidockercmd_test.go): the hostile
// model is a simulator of this test process on the host's loopback, and
// the CLI (from tests/cli-agents) is one agent, "solo", of a real massgen
// run against it.

// loopback is a fresh listener on the host's 127.0.0.1: a scenario may
// name its address before the simulator serves on it.
func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	return ln
}

// simServe serves the simulator of scenario sc on ln until the test ends
// and returns its base URL (…/v1).
func simServe(t *testing.T, ln net.Listener, sc string) string {
	t.Helper()
	base, _ := simServeRecorded(t, ln, sc)
	return base
}

// simServeRecorded is simServe, with the simulator (its Requests).
func simServeRecorded(t *testing.T, ln net.Listener, sc string) (string, *llmsim.Server) {
	t.Helper()
	sim := llmsim.New(simtest.Scenario(t, sc))
	srv := &http.Server{Handler: sim.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return "http://" + ln.Addr().String() + "/v1", sim
}

// hostileScenario is the scenario of the model "hostile" taking steps
// (JSON is YAML).
func hostileScenario(steps ...any) string {
	sc, _ := json.Marshal(map[string]any{"models": map[string]any{"hostile": map[string]any{"steps": steps}}})
	return string(sc)
}

// callStep is a step of one tool call, its arguments given as JSON.
func callStep(name string, args any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"calls": []any{map[string]any{"name": name, "arguments": string(b)}}}
}

// answerStep is the step that answers "done".
var answerStep = map[string]any{"answer": "done"}

// cliRun runs the coding-agent CLI of vendor typ as solo, its backend
// (model "hostile", cwd "ws") with the keys given, the config's other
// top-level keys top, against the simulator at base; env adds to
// massgen's environment (after the CLI's PATH and endpoint).
func cliRun(t *testing.T, dir, typ, base string, backend, top map[string]any, env ...string) result {
	t.Helper()
	b := map[string]any{"type": typ, "model": "hostile", "cwd": "ws"}
	for k, v := range backend {
		b[k] = v
	}
	cfg := map[string]any{"agent": map[string]any{"id": "solo", "backend": b},
		"ui": map[string]any{"enable_final_presentation": false}}
	for k, v := range top {
		cfg[k] = v
	}
	js, _ := json.Marshal(cfg)
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), js, 0o644))
	env = append([]string{"PATH=" + clitest.PATH(t, typ), "MASSGEN_" + strings.ToUpper(typ) + "_BASE_URL=" + base}, env...)
	return massgen(t, dir, runOpts{env: env}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
}

// probeWrap has cmd's output go to out.txt of the workspace, and ran.txt
// say it ran.
func probeWrap(cmd string) string {
	return fmt.Sprintf("( %s ) > out.txt 2>&1; echo ran > ran.txt", cmd)
}

// probeOutput is what a probe (probeWrap) wrote, after a run that must
// have completed with the probe run.
func probeOutput(t *testing.T, dir string, r result) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("the run failed:\n%s", r)
	}
	if _, ran := wsFile(dir, "ran.txt"); !ran {
		t.Fatalf("the probe did not run:\n%s", r)
	}
	out, _ := wsFile(dir, "out.txt")
	t.Logf("output: %s", tail(out, 500))
	return out
}

// hostTarget is the listener an attack on a CLI's network aims at:
// "loopback" (the host's 127.0.0.1), "address" (a non-loopback address of
// the host; skipped without one), else none. It returns the listener (nil
// for none) and its address.
func hostTarget(t *testing.T, target string) (*listener, string) {
	t.Helper()
	switch target {
	case "loopback":
		l := listen(t, "tcp", "127.0.0.1:0")
		return l, l.ln.Addr().String()
	case "address":
		ip := hostAddr()
		if ip == "" {
			t.Skip("the host has no non-loopback address")
		}
		l := listen(t, "tcp", net.JoinHostPort(ip, "0"))
		return l, l.ln.Addr().String()
	}
	return nil, target
}

// noConnections fails t when the host's listener l (nil: none) was reached.
func noConnections(t *testing.T, l *listener, addr, out string) {
	t.Helper()
	if l != nil {
		if n := l.conns.Load(); n > 0 {
			t.Errorf("the host's listener %s got %d connection(s); output: %s", addr, n, out)
		}
	}
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

// homeUnchanged fails t when the user's home changed since before but for
// massgen's cache: the login unchanged, nothing planted.
func homeUnchanged(t *testing.T, user string, before wstest.Tree) {
	t.Helper()
	var changed []string
	for _, line := range diffLines(before, snap(t, user)) {
		if !strings.Contains(line, ".cache") {
			changed = append(changed, line)
		}
	}
	if len(changed) > 0 {
		t.Errorf("the user's home changed:\n%s", strings.Join(changed, "\n"))
	}
}

// notOnHost fails t for each of paths that exists on the host.
func notOnHost(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written on the host", p)
		}
	}
}

// diffLines are the lines of one tree's listing that the other lacks.
func diffLines(a, b []string) []string {
	in := map[string]int{}
	for _, l := range a {
		in[l]++
	}
	for _, l := range b {
		in[l]--
	}
	var out []string
	for l, n := range in {
		if n != 0 {
			out = append(out, fmt.Sprintf("%+d %s", -n, l))
		}
	}
	return out
}
