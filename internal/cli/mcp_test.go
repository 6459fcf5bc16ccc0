package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// startMCP runs `massgen mcp args…` in-process, as a client would start it,
// and returns its exit code (once it has ended) and its stderr.
func startMCP(t *testing.T, stdin io.Reader, stdout io.Writer, args ...string) (wait func() int, stderr *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	stderr = &syncBuffer{}
	getenv := func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}
	code := make(chan int, 1)
	go func() {
		code <- Run(t.Context(), append([]string{"mcp"}, args...), Env{Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, WorkDir: dir})
	}()
	return func() int { return <-code }, stderr
}

func runText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("no content")
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// massgen mcp over stdio, driven by the go-sdk client: a run with its
// answer and log directory; then the client goes away in the middle of a
// run, which stops the team's requests and ends massgen mcp.
func TestMCPOverStdio(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  \"*\":\n    always: {fault: hang}\n")
	work := t.TempDir()
	hang := filepath.Join(work, "hang.yaml")
	if err := os.WriteFile(hang, []byte("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: \""+base+"\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := filepath.Join(work, "logs")
	wait, stderr := startMCP(t, inR, outW, "--config", "@examples/sim_three_agents", "--log-dir", logs)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "What is the capital of France?"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var out struct {
		FinalAnswer string `json:"final_answer"`
		Winner      string
		LogDir      string `json:"log_dir"`
	}
	data, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(data, &out)
	if runText(t, res) != out.FinalAnswer || out.Winner == "" || !strings.HasPrefix(out.LogDir, logs) {
		t.Errorf("text %q, structured %s", runText(t, res), data)
	}

	go func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": hang}})
	}()
	if err := sim.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) == 1 }); err != nil {
		t.Fatal(err)
	}
	// The client process dies: massgen's stdin ends, with a call in flight.
	_ = inW.Close()
	if code := wait(); code != 0 {
		t.Errorf("massgen mcp exited %d when its client went away:\n%s", code, stderr)
	}
	_ = outW.Close()
	cancel()
	_ = cs.Close()
	if err := sim.WaitFor(t.Context(), func(rs []llmsim.Record) bool { return !rs[0].End.IsZero() }); err != nil {
		t.Fatal(err)
	}
	if r := sim.Requests()[0]; r.Outcome != llmsim.OutcomeCancelled {
		t.Errorf("the team's request: outcome %s, want cancelled", r.Outcome)
	}
}

var listening = regexp.MustCompile(`listening on (http://\S+/mcp)`)

// massgen mcp --http: streamable HTTP on loopback, refusing requests
// addressed to another host name (DNS rebinding) and cross-origin
// browser requests; it stops on cancel.
func TestMCPOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"mcp", "--http", "127.0.0.1:0", "--no-logs"}, Env{Getenv: func(string) string { return "" },
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, WorkDir: dir})
	}()
	var url string
	for i := 0; i < 500 && url == ""; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("massgen mcp --http did not start:\n%s", stderr)
	}
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": "sim_single_agent"}})
	if err != nil || res.IsError || runText(t, res) == "" {
		t.Fatalf("%v %+v", err, res)
	}
	_ = cs.Close()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"a request for another host name", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"a cross-origin browser request", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a local client", nil, http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(cctx, http.MethodPost, url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tt.headers {
			req.Header.Set(k, v)
		}
		if h := tt.headers["Host"]; h != "" {
			req.Host = h
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d on cancel:\n%s", c, stderr)
	}
}

func TestMCPRefusesANonLoopbackAddressAndABadConfig(t *testing.T) {
	for _, args := range [][]string{{"--http", "0.0.0.0:0"}, {"--config", "nope.yaml"}} {
		r := massgen(t, t.Context(), nil, nil, append([]string{"mcp"}, args...)...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1: %s", args, r.code, r.stderr)
		}
	}
}
