package sandbox_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// In docker mode a container's commands reach their endpoints (massgen's
// tool endpoint of code-based tools) through the relay massgen runs in the
// container — with busybox's wget and with the host's Python, which the
// image does not have — holding only a stand-in for the key; the provider
// gets the real key. Nothing else is reachable: not the endpoint's own
// address, not a service on the host's loopback or on another address of
// the host, and no listener sees a connection.
func TestDockerEndpointsReachOnlyTheirEndpoints(t *testing.T) {
	nw := newNetWorld(t)
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{
		Endpoints: []sandbox.Endpoint{{URL: nw.provider.URL + "/v1", Key: "real-key-123"}},
		RouteEnv: func(rs []sandbox.Route) []string {
			return []string{"TOOLS_URL=" + rs[0].URL, "TOOLS_KEY=" + rs[0].Key}
		},
	})
	res := run(t, r, `wget -qO- --header "x-api-key: $TOOLS_KEY" "$TOOLS_URL/chat"`)
	if res.Output != "provider /v1/chat" {
		t.Fatalf("wget through the relay: %+v", res)
	}
	py := `python3 -c 'import os, urllib.request as u; r = u.Request(os.environ["TOOLS_URL"] + "/py", headers={"x-api-key": os.environ["TOOLS_KEY"]}); print(u.urlopen(r).read().decode())'`
	if res := run(t, r, py); strings.TrimSpace(res.Output) != "provider /v1/py" {
		t.Fatalf("the host's Python through the relay: %+v", res)
	}
	if res := run(t, r, `env | grep -c real-key-123; echo "$TOOLS_URL"`); !strings.HasPrefix(res.Output, "0\nhttp://127.0.0.1:") {
		t.Fatalf("a command holds the real key, or its route is not the relay's: %q", res.Output)
	}
	nw.mu.Lock()
	keys := strings.Join(nw.keys, ",")
	nw.mu.Unlock()
	if strings.Count(keys, "real-key-123") != 2 || strings.Contains(keys, "massgen-sandbox-key-") {
		t.Fatalf("the provider saw %q: want the real key for both calls, never the stand-in", keys)
	}
	var targets []string
	for _, u := range []string{nw.provider.URL, nw.service.URL} {
		targets = append(targets, strings.TrimPrefix(u, "http://"))
	}
	for _, ln := range nw.unnamed {
		targets = append(targets, ln.Addr().String())
	}
	for _, a := range targets {
		host, port, _ := net.SplitHostPort(a)
		res := run(t, r, `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 `+host+" "+port+`; python3 -c 'import socket; socket.create_connection(("`+host+`", `+port+`), 3); print("CONNECTED")'`)
		if strings.Contains(res.Output, "provider") || strings.Contains(res.Output, "service") || strings.Contains(res.Output, "CONNECTED") {
			t.Errorf("a command reached %s: %q", a, res.Output)
		}
	}
	if got := nw.reached(t); len(got) > 0 {
		t.Errorf("unnamed listeners saw connections: %v", got)
	}
}

// BenchmarkDockerEndpoint: a command in the container fetching from an
// endpoint through the relay, against the same fetch made directly over
// network mode host, interleaved in one run; it reports each per command
// and their ratio (docker exec is most of either).
func BenchmarkDockerEndpoint(b *testing.B) {
	nw := newNetWorld(b)
	w := newWorld(b)
	relay := w.dockerRunner(b, sandbox.Config{
		Endpoints: []sandbox.Endpoint{{URL: nw.service.URL + "/mcp"}},
		RouteEnv:  func(rs []sandbox.Route) []string { return []string{"TOOLS_URL=" + rs[0].URL} },
	})
	direct := w.dockerRunner(b, sandbox.Config{Docker: sandbox.Docker{Network: "host"}})
	fetch := func(r *sandbox.Runner, cmd string) time.Duration {
		start := time.Now()
		res, err := r.Run(context.Background(), cmd, "")
		if err != nil || res.Output != "service /mcp/x" {
			b.Fatalf("%s: %+v %v", cmd, res, err)
		}
		return time.Since(start)
	}
	viaRelay := `wget -qO- "$TOOLS_URL/x"`
	viaHost := "wget -qO- " + nw.service.URL + "/mcp/x"
	fetch(relay, viaRelay) // the containers are made before the timing
	fetch(direct, viaHost)
	var tr, td time.Duration
	b.ResetTimer()
	for range b.N {
		tr += fetch(relay, viaRelay)
		td += fetch(direct, viaHost)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tr.Microseconds())/n/1000, "relay-ms/op")
	b.ReportMetric(float64(td.Microseconds())/n/1000, "direct-ms/op")
	b.ReportMetric(float64(tr)/float64(td), "relay/direct")
}

// The host's Python shown to a container lives under the user's cache
// directory; a container made after that directory went (HOME changed, as
// tests change it, or the cache was cleared) still gets it, written again.
func TestDockerPythonSurvivesTheCacheGoing(t *testing.T) {
	nw := newNetWorld(t)
	w := newWorld(t)
	cfg := sandbox.Config{
		Endpoints: []sandbox.Endpoint{{URL: nw.service.URL + "/mcp"}},
		RouteEnv:  func(rs []sandbox.Route) []string { return []string{"TOOLS_URL=" + rs[0].URL} },
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	py := `python3 -c 'import urllib.request, os; print(urllib.request.urlopen(os.environ["TOOLS_URL"] + "/x").read().decode())'`
	r1 := w.dockerRunner(t, cfg)
	if res := run(t, r1, py); strings.TrimSpace(res.Output) != "service /mcp/x" {
		t.Fatalf("first container: %+v", res)
	}
	r1.Close()
	if err := os.RemoveAll(home); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	r2 := w.dockerRunner(t, cfg)
	if res := run(t, r2, py); strings.TrimSpace(res.Output) != "service /mcp/x" {
		t.Fatalf("a container made after the cache went: %+v", res)
	}
}
