package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// npmBin finds a server of tests/mcp-npm (installed by .ci/run with npm
// ci), or $MASSGEN_MCP_NPM_BIN. It skips when they are absent, except in
// CI, where their absence is a failure.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("MASSGEN_MCP_NPM_BIN")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", "tests", "mcp-npm", "node_modules", ".bin"))
	}
	p := filepath.Join(dir, name)
	_, err := os.Stat(p)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		msg := fmt.Sprintf("%s not available (%v): run `npm ci` in tests/mcp-npm", name, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// everything is server-everything over stdio.
func everything(t *testing.T) Server {
	return Server{Name: "everything", Type: Stdio, Command: npmBin(t, "mcp-server-everything"), Args: []string{"stdio"}}
}

// everythingHTTP starts server-everything in its streamable HTTP mode on a
// free loopback port and returns its config; the process is killed at the
// end of the test.
func everythingHTTP(t *testing.T) Server {
	return everythingServing(t, "streamableHttp", "listening on port", StreamableHTTP, "/mcp")
}

// everythingSSE is server-everything in its SSE mode (the older HTTP transport).
func everythingSSE(t *testing.T) Server {
	return everythingServing(t, "sse", "running on port", SSE, "/sse")
}

func everythingServing(t *testing.T, mode, ready, typ, path string) Server {
	t.Helper()
	bin := npmBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	isolate(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd); _ = cmd.Wait() })
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), ready) {
				close(listening)
				once = true
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(time.Minute):
		t.Fatalf("server-everything %s did not say it was listening within a minute", mode)
	}
	return Server{Name: "everything", Type: typ, URL: fmt.Sprintf("http://127.0.0.1:%d%s", port, path)}
}

// started is a started pool of cfgs, closed at the end of the test.
func started(t *testing.T, opts Options, cfgs ...Server) (*Pool, []Handle) {
	t.Helper()
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	p := NewPool(opts)
	var hs []Handle
	for _, c := range cfgs {
		h, err := p.Add(c)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	p.Start()
	t.Cleanup(p.Close)
	return p, hs
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
