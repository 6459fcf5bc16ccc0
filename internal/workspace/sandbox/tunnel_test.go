package sandbox_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// freePorts are loopback ports nobody listens on now.
func freePorts(t *testing.T, n int) []int {
	var out []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	}
	return out
}

// startTunnelRelay runs the relay (this test binary) as docker mode runs
// it in a container, its standard input and output the tunnel, served by
// n; it returns once the relay listens, and the relay's process.
func startTunnelRelay(t *testing.T, n *sandbox.TunnelNet) (*exec.Cmd, io.WriteCloser, chan error) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, n.RelayArgs()...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready, served := make(chan struct{}), make(chan error, 1)
	go func() { served <- n.ServeReady(out, in, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("the relay ended before it listened: %v", err)
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the relay did not listen within 20 s")
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, in, served
}

func get(t *testing.T, url string, header map[string]string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

// A container's relay, over its tunnel, reaches each endpoint: the
// provider through massgen's proxy with the real key in place of the
// stand-in, and a plain service as raw TCP; the relay ends with its
// standard input (massgen letting go of the container), and so does the
// tunnel.
func TestTunnelReachesItsEndpoints(t *testing.T) {
	w := newNetWorld(t)
	n, err := sandbox.NewTunnelNet([]sandbox.Endpoint{{URL: w.provider.URL + "/v1", Key: "real-key-123"}, {URL: w.service.URL + "/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	sandbox.SetTunnelPorts(n, freePorts(t, 2))
	routes := n.Routes()
	if routes[0].Key == "" || routes[0].Key == "real-key-123" || routes[1].Key != "" {
		t.Fatalf("routes %+v: the keyed endpoint needs a stand-in, the other none", routes)
	}
	cmd, in, served := startTunnelRelay(t, n)
	for i := range 3 { // several connections, one after the other and at once
		body, err := get(t, routes[0].URL+"/chat", map[string]string{"x-api-key": routes[0].Key})
		if err != nil || body != "provider /v1/chat" {
			t.Fatalf("provider call %d: %q, %v", i, body, err)
		}
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			body, err := get(t, routes[1].URL+"/x", nil)
			if err == nil && body != "service /mcp/x" {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("service call: %v", err)
		}
	}
	w.mu.Lock()
	keys := strings.Join(w.keys, ",")
	w.mu.Unlock()
	if strings.Count(keys, "real-key-123") != 3 || strings.Contains(keys, routes[0].Key) {
		t.Fatalf("the provider saw keys %q; want the real key each time, never the stand-in", keys)
	}
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the relay exited with %v once its input ended", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the relay outlived its input")
	}
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return once the relay was gone")
	}
	if _, err := get(t, routes[1].URL+"/x", nil); err == nil {
		t.Fatal("the relay's port answers after it exited")
	}
}
