package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"golang.org/x/sys/unix"
)

// probeEnv holds the probe's steps (JSON) when the test binary runs as a
// program inside the sandbox.
const probeEnv = "MASSGEN_NET_PROBE"

// probeStep is one thing the probe tries: dial a TCP address, resolve a
// name, or GET a URL with a header.
type probeStep struct {
	Dial    string            `json:"dial,omitempty"`
	Resolve string            `json:"resolve,omitempty"`
	Get     string            `json:"get,omitempty"`
	Header  map[string]string `json:"header,omitempty"`
	// Sleep keeps the probe running (for the kill test).
	Sleep bool `json:"sleep,omitempty"`
	// Exit is the probe's exit status.
	Exit int `json:"exit,omitempty"`
}

// probeResult is what one step gave: the body of a GET, or the error.
type probeResult struct {
	OK   bool   `json:"ok"`
	Body string `json:"body,omitempty"`
	Err  string `json:"err,omitempty"`
}

// probe runs the steps and prints one result per line.
func probe(spec string) int {
	var steps []probeStep
	if err := json.Unmarshal([]byte(spec), &steps); err != nil {
		fmt.Println(err)
		return 2
	}
	enc := json.NewEncoder(os.Stdout)
	exit := 0
	for _, s := range steps {
		var r probeResult
		switch {
		case s.Dial != "":
			c, err := net.DialTimeout("tcp", s.Dial, 5*time.Second)
			if err == nil {
				c.Close()
				r.OK = true
			} else {
				r.Err = err.Error()
			}
		case s.Resolve != "":
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			addrs, err := net.DefaultResolver.LookupHost(ctx, s.Resolve)
			cancel()
			r.OK, r.Body = err == nil, strings.Join(addrs, ",")
			if err != nil {
				r.Err = err.Error()
			}
		case s.Get != "":
			req, _ := http.NewRequest("GET", s.Get, nil)
			for k, v := range s.Header {
				req.Header.Set(k, v)
			}
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				r.Err = err.Error()
				break
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r.OK, r.Body = resp.StatusCode == 200, string(b)
		case s.Sleep:
			fmt.Println(`{"ok":true,"body":"sleeping"}`)
			time.Sleep(time.Hour)
		}
		exit = s.Exit
		_ = enc.Encode(r)
	}
	return exit
}

// netWorld is a sandboxed program's surroundings: a "provider" that wants
// a key, a plain service (as massgen's workflow server is), and host
// services that nobody named — one on the host's loopback and one on a
// non-loopback address of the host, if it has one.
type netWorld struct {
	provider, service *httptest.Server
	mu                sync.Mutex
	keys              []string // the x-api-key each provider request carried
	unnamed           []net.Listener
}

func newNetWorld(t testing.TB) *netWorld {
	w := &netWorld{}
	w.provider = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.keys = append(w.keys, r.Header.Get("x-api-key")+" "+r.URL.Query().Get("key"))
		w.mu.Unlock()
		fmt.Fprintf(rw, "provider %s", r.URL.Path)
	}))
	t.Cleanup(w.provider.Close)
	w.service = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "service %s", r.URL.Path)
	}))
	t.Cleanup(w.service.Close)
	addrs := []string{"127.0.0.1:0"}
	if ip := hostAddress(); ip != "" {
		addrs = append(addrs, net.JoinHostPort(ip, "0"))
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		w.unnamed = append(w.unnamed, ln)
	}
	return w
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

// reached lists the unnamed listeners that a connection reached: the
// program has exited, so any connection it made waits in the backlog, and
// one non-blocking accept finds it.
func (w *netWorld) reached(t *testing.T) []string {
	var out []string
	for _, ln := range w.unnamed {
		rc, err := ln.(*net.TCPListener).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		_ = rc.Control(func(fd uintptr) {
			if nfd, _, err := unix.Accept(int(fd)); err == nil { // the socket is non-blocking: EAGAIN when none waits
				unix.Close(nfd)
				got = true
			}
		})
		if got {
			out = append(out, ln.Addr().String())
		}
	}
	return out
}

// runProbe runs the probe in the sandbox with the Net and returns its
// results and how it exited.
func runProbe(t *testing.T, n *sandbox.Net, token string, steps []probeStep) ([]probeResult, error) {
	t.Helper()
	w := newWorld(t)
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(steps)
	exe, _ := os.Executable()
	cmd := exec.Command(exe, token)
	sandbox.ProgramWith(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin", probeEnv + "=" + string(spec)}, sandbox.ProgramOptions{Net: n})
	out, err := cmd.Output()
	var res []probeResult
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r probeResult
		if json.Unmarshal([]byte(line), &r) == nil {
			res = append(res, r)
		}
	}
	if len(res) != len(steps) {
		t.Fatalf("probe printed %d results for %d steps (%v): %s", len(res), len(steps), err, out)
	}
	return res, err
}

// A program with a Net reaches its endpoints — the provider through the
// relay's proxy, which puts the real key in place of the stand-in the
// program holds, and a plain service as raw TCP — and nothing else: not a
// service on the host's loopback, not a non-loopback address of the host,
// not cloud metadata, not a name server.
func TestNetReachesOnlyItsEndpoints(t *testing.T) {
	needBwrap(t)
	w := newNetWorld(t)
	n, err := sandbox.NewNet([]sandbox.Endpoint{{URL: w.provider.URL + "/v1", Key: "real-key-123"}, {URL: w.service.URL + "/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	routes := n.Routes()
	if routes[0].Key == "" || strings.Contains(routes[0].Key, "real-key") || routes[1].Key != "" {
		t.Fatalf("routes %+v", routes)
	}
	if !strings.HasPrefix(routes[0].URL, "http://127.0.0.1:") || !strings.HasSuffix(routes[0].URL, "/v1") ||
		!strings.HasSuffix(routes[1].URL, "/mcp") {
		t.Fatalf("routes %+v", routes)
	}
	steps := []probeStep{
		{Get: routes[0].URL + "/models", Header: map[string]string{"x-api-key": routes[0].Key}},
		{Get: routes[0].URL + "/models?key=" + routes[0].Key},
		{Get: routes[1].URL},
		{Get: w.provider.URL + "/v1/models"}, // the endpoint itself, not its route
	}
	var refused []string
	for _, ln := range w.unnamed {
		steps = append(steps, probeStep{Dial: ln.Addr().String()})
		refused = append(refused, "dial "+ln.Addr().String())
	}
	steps = append(steps, probeStep{Dial: "169.254.169.254:80"}, probeStep{Resolve: "example.com"}, probeStep{Exit: 3})
	refused = append(refused, "dial 169.254.169.254:80 (cloud metadata)", "resolve example.com")

	res, err := runProbe(t, n, "net-probe-"+t.Name(), steps)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("the probe's exit status did not come through the relay: %v", err)
	}
	for i, want := range []string{"provider /v1/models", "provider /v1/models", "service /mcp"} {
		if !res[i].OK || res[i].Body != want {
			t.Errorf("step %d: %+v, want %q", i, res[i], want)
		}
	}
	w.mu.Lock()
	keys := w.keys
	w.mu.Unlock()
	if len(keys) != 2 || keys[0] != "real-key-123 " || keys[1] != " real-key-123" {
		t.Errorf("the provider got keys %q, want the real one in the header, then the query", keys)
	}
	if res[3].OK {
		t.Errorf("the provider's own address was reached from inside: %+v", res[3])
	}
	for i, what := range refused {
		r := res[4+i]
		if r.OK {
			t.Errorf("%s: reached (%+v)", what, r)
		} else {
			t.Logf("%s: %s", what, r.Err)
		}
	}
	if got := w.reached(t); len(got) > 0 {
		t.Errorf("unnamed host services saw connections: %v", got)
	}
	if left := processesWith("net-probe-" + t.Name()); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// Killing the sandbox (as a CLI agent's task ends: bwrap's process group)
// takes the relay and the program with it; Close ends massgen's side.
func TestNetRelayDiesWithTheProgram(t *testing.T) {
	needBwrap(t)
	w := newNetWorld(t)
	n, err := sandbox.NewNet([]sandbox.Endpoint{{URL: w.service.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ws := newWorld(t)
	bwrap, _ := sandbox.Bwrap()
	token := "net-kill-" + t.Name()
	spec, _ := json.Marshal([]probeStep{{Sleep: true}})
	exe, _ := os.Executable()
	cmd := exec.Command(exe, token)
	sandbox.ProgramWith(bwrap, ws.g, cmd, []string{"PATH=/usr/bin:/bin", probeEnv + "=" + string(spec)}, sandbox.ProgramOptions{Net: n})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 64)
	if k, _ := stdout.Read(line); !strings.Contains(string(line[:k]), "sleeping") {
		t.Fatalf("probe said %q", line[:k])
	}
	if len(processesWith(token)) < 2 {
		t.Fatalf("the relay and the probe are not both running: %v", processesWith(token))
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	n.Close()
	// A process sent SIGKILL is gone once the kernel has delivered it.
	left := processesWith(token)
	for i := 0; i < 40 && len(left) > 0; i++ {
		time.Sleep(50 * time.Millisecond)
		left = processesWith(token)
	}
	if len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// An endpoint must be an http or https URL.
func TestNetRefusesOtherEndpoints(t *testing.T) {
	for _, u := range []string{"unix:///var/run/docker.sock", "ftp://example.com", "127.0.0.1:80", ""} {
		if n, err := sandbox.NewNet([]sandbox.Endpoint{{URL: u}}); err == nil {
			n.Close()
			t.Errorf("%q accepted", u)
		}
	}
}

// processesWith lists the processes whose command line holds s.
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, s) {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

// A thousand streamed chat completions in a row through the relay's
// proxy, on one kept-alive connection, all arrive whole (the proxy once
// cut one in a few hundred: net_linux.go's EnableFullDuplex).
func TestNetStreamsArriveWhole(t *testing.T) {
	needBwrap(t)
	_, base := simtest.Start(t, "")
	n, err := sandbox.NewNet([]sandbox.Endpoint{{URL: base, Key: "sk-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	w := newWorld(t)
	bwrap, _ := sandbox.Bwrap()
	exe, _ := os.Executable()
	r := n.Routes()[0]
	cmd := exec.Command(exe)
	sandbox.ProgramWith(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin", benchEnv + "=" + r.URL + " " + r.Key + " 1000"}, sandbox.ProgramOptions{Net: n})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}
