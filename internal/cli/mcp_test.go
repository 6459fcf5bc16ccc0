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
	"sync"
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
	wait, stderr := startMCP(t, inR, outW, "--config", "@examples/sim_three_agents", "--log-dir", logs, "--config-dir", work)
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

	// A path beyond --config-dir is refused, quoting nothing of the file.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": "/proc/self/environ"}})
	if err != nil || !res.IsError || !strings.Contains(runText(t, res), "--allow-config-paths") || strings.Contains(runText(t, res), "PATH=") {
		t.Errorf("/proc/self/environ over stdio: %v %+v", err, res)
	}

	go func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": "hang.yaml"}})
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

// mcpHTTP starts `massgen mcp --http 127.0.0.1:0 args…` until the test ends,
// and returns its URL and stderr; stop ends it and returns its exit code.
func mcpHTTP(t *testing.T, getenv func(string) string, dir string, args ...string) (url string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stderr = &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, append([]string{"mcp", "--http", "127.0.0.1:0", "--no-logs"}, args...), Env{Getenv: getenv,
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, WorkDir: dir})
	}()
	stop = sync.OnceValue(func() int { cancel(); return <-code })
	t.Cleanup(func() { stop() })
	for i := 0; i < 500 && url == ""; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("massgen mcp --http did not start:\n%s", stderr)
	}
	return url, stderr, stop
}

// keyed is an http.Client sending "Authorization: Bearer key".
func keyed(key string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+key)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// massgen mcp --http: streamable HTTP on loopback behind an API key made
// at the first start (0600, printed once, kept for the next start),
// refusing requests without it, addressed to another host name (DNS
// rebinding) or cross-origin from a browser; it stops on cancel.
func TestMCPOverHTTP(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "state", "massgen", "mcp_api_key")
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return filepath.Join(dir, "state")
		}
		return ""
	}
	url, stderr, stop := mcpHTTP(t, getenv, dir)
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("no key file at $XDG_STATE_HOME/massgen/mcp_api_key: %v\n%s", err, stderr)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(keyFile)
	key := strings.TrimSpace(string(data))
	if len(key) < 32 || !strings.Contains(stderr.String(), "Authorization: Bearer "+key) || !strings.Contains(stderr.String(), keyFile) {
		t.Errorf("key %q; stderr does not print its header and file:\n%s", key, stderr)
	}
	cctx, ccancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(cctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: keyed(key)}, nil)
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
		{"a request without the key", map[string]string{"Authorization": ""}, http.StatusUnauthorized},
		{"a request with another key", map[string]string{"Authorization": "Bearer " + key[1:]}, http.StatusUnauthorized},
		{"a request for another host name", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"a request for another host name, without the key", map[string]string{"Host": "evil.example", "Authorization": ""}, http.StatusForbidden},
		{"a cross-origin browser request", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a local client", nil, http.StatusOK},
		{"a local client calling it localhost", map[string]string{"Host": "localhost"}, http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(cctx, http.MethodPost, url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
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
		if tt.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%s: WWW-Authenticate %q", tt.name, resp.Header.Get("WWW-Authenticate"))
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if c := stop(); c != 0 {
		t.Errorf("exit %d on cancel:\n%s", c, stderr)
	}

	// The next start keeps the key, and does not print it again.
	url, stderr, _ = mcpHTTP(t, getenv, dir)
	if data2, _ := os.ReadFile(keyFile); string(data2) != string(data) || strings.Contains(stderr.String(), key) {
		t.Errorf("restart: key file %q (was %q); stderr:\n%s", data2, data, stderr)
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(cctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: keyed(key)}, nil)
	if err != nil {
		t.Fatalf("the kept key after a restart: %v", err)
	}
	_ = cs.Close()
}

// --api-key (or MASSGEN_MCP_API_KEY) is the key, and no file is made;
// --no-auth serves without one, on loopback only.
func TestMCPKeyFromTheFlagOrTheEnvironmentOrNone(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  string
	}{{"flag", []string{"--api-key", "flag-key"}, ""}, {"environment", nil, "env-key"}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			getenv := func(k string) string {
				switch k {
				case "HOME":
					return dir
				case "MASSGEN_MCP_API_KEY":
					return tt.env
				}
				return ""
			}
			url, stderr, _ := mcpHTTP(t, getenv, dir, tt.args...)
			key := "flag-key"
			if tt.env != "" {
				key = tt.env
			}
			if strings.Contains(stderr.String(), key) || exists(filepath.Join(dir, ".local", "state", "massgen", "mcp_api_key")) {
				t.Errorf("a given key is printed or kept in a file:\n%s", stderr)
			}
			for k, want := range map[string]bool{key: true, "other": false} {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: keyed(k), MaxRetries: -1}, nil)
				if (err == nil) != want {
					t.Errorf("key %q: connect error %v", k, err)
				}
				if err == nil {
					_ = cs.Close()
				}
			}
		})
	}
	t.Run("no-auth", func(t *testing.T) {
		dir := t.TempDir()
		url, _, _ := mcpHTTP(t, func(string) string { return "" }, dir, "--no-auth")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
	})
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestMCPRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open_key")
	if err := os.WriteFile(open, []byte("k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--http", "0.0.0.0:0", "--no-auth"}, 1, "loopback address only"},
		{[]string{"--config", "nope.yaml"}, 1, "not found"},
		{[]string{"--api-key", "k"}, 1, "is for --http"},
		{[]string{"--config-dir", filepath.Join(dir, "nope")}, 1, "not a directory"},
		{[]string{"--http", "127.0.0.1:0", "--no-auth", "--api-key", "k"}, 1, "contradict"},
		{[]string{"--http", "127.0.0.1:0", "--api-key-file", open}, 2, "can be read or written by other users"},
	} {
		r := massgen(t, t.Context(), nil, nil, append([]string{"mcp"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%v: exit %d, want %d saying %q: %s", tt.args, r.code, tt.code, tt.says, r.stderr)
		}
	}
}
