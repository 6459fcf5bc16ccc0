package claudecode_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/claudecode"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"golang.org/x/sys/unix"
)

// With its network limited (as massgen runs a CLI agent by default),
// Claude Code still does its turn on the simulator — its model requests
// go through the relay's proxy, its new_answer through the relay to the
// workflow server — while a command its Bash tool runs reaches nothing
// massgen did not name: not a service on the host's loopback, not a
// non-loopback address of the host, not the provider's own address. The
// CLI holds a stand-in for its key, never the key; no process is left.
func TestNetworkLimitedToItsEndpoints(t *testing.T) {
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var unnamed []net.Listener
	addrs := []string{"127.0.0.1:0"}
	if ip := hostAddress(); ip != "" {
		addrs = append(addrs, net.JoinHostPort(ip, "0"))
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		unnamed = append(unnamed, ln)
	}
	// The script reads its targets from the workspace: the unnamed
	// listeners, and the simulator's own address, known once it runs.
	root := t.TempDir()
	ws := filepath.Join(root, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `for a in $(cat targets.txt); do (exec 3<>/dev/tcp/$a) 2>/dev/null && echo REACHED_$a || echo refused_$a; done; echo KEY=$ANTHROPIC_API_KEY`
	args, _ := json.Marshal(map[string]string{"command": script, "description": "probe the network"})
	sc := fmt.Sprintf("models:\n  sim-claude:\n    steps:\n      - calls:\n          - {name: Bash, arguments: '%s'}\n      - answer: \"Probed.\"\n",
		strings.ReplaceAll(string(args), "'", "''"))
	sim, base := simtest.Start(t, sc)
	u, _ := url.Parse(base)
	var targets []string
	for _, ln := range unnamed {
		a := ln.Addr().(*net.TCPAddr)
		targets = append(targets, fmt.Sprintf("%s/%d", a.IP, a.Port))
	}
	targets = append(targets, u.Hostname()+"/"+u.Port()) // the provider itself, not its route
	if err := os.WriteFile(filepath.Join(ws, "targets.txt"), []byte(strings.Join(targets, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	a := newAgent(t, base)
	a.Workdir = ws
	g, err := workspace.New(workspace.Policy{Agent: "cc", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	a.Network = clitest.Network(bwrap, g, a.Home)
	props, others, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system, User: "Probe the network."})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if len(props) != 1 || props[0].Action.Content != "Probed." {
		t.Fatalf("proposals %+v", props)
	}
	var probe *agent.ToolUsed
	for _, o := range others {
		if tu, ok := o.(agent.ToolUsed); ok && tu.Tool == "Bash" {
			probe = &tu
		}
	}
	if probe == nil {
		t.Fatal("the Bash call was not reported")
	}
	t.Logf("Bash in the sandbox: %s", probe.Result)
	for _, target := range targets {
		if !strings.Contains(probe.Result, "refused_"+target) {
			t.Errorf("%s was not refused: %s", target, probe.Result)
		}
	}
	if strings.Contains(probe.Result, a.APIKey) || !strings.Contains(probe.Result, "KEY=massgen-sandbox-key-") {
		t.Errorf("the CLI's key is not the stand-in: %s", probe.Result)
	}
	for _, ln := range unnamed {
		if accepted(t, ln) {
			t.Errorf("%s saw a connection from the sandbox", ln.Addr())
		}
	}
	if len(sim.Requests()) < 2 {
		t.Errorf("%d model requests", len(sim.Requests()))
	}
	if left := clitest.Processes(t, a.Home); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// accepted reports whether a connection waits in ln's backlog (one
// non-blocking accept).
func accepted(t *testing.T, ln net.Listener) bool {
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got bool
	_ = rc.Control(func(fd uintptr) {
		if nfd, _, err := unix.Accept(int(fd)); err == nil {
			unix.Close(nfd)
			got = true
		}
	})
	return got
}

// hostAddress is a non-loopback IPv4 address of this host, or "".
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// Claude Code's default endpoint is named, so its network can be limited
// to it without a base_url.
func TestDefaultEndpoint(t *testing.T) {
	var v cli.Vendor = claudecode.Vendor{}
	d, ok := v.(cli.DefaultEndpoint)
	if !ok || d.DefaultBaseURL() != "https://api.anthropic.com" {
		t.Errorf("default endpoint %v", d)
	}
}
