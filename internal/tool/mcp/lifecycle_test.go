package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/tool"
)

// flaky is a stdio server that runs server-everything while the file
// flag exists and otherwise fails to start: it writes "down" to its
// stderr and exits 1. Each start attempt leaves one line in its log.
func flaky(t *testing.T, flag string) Server {
	script := `if [ -f "$0" ]; then echo up >&2; exec ` + npmBin(t, "mcp-server-everything") + ` stdio; else echo down >&2; exit 1; fi`
	return Server{Name: "flaky", Command: "sh", Args: []string{"-c", script, flag}}
}

func countLines(t *testing.T, path, word string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), word+"\n")
}

// The stderr log is written where StartIn says while the server runs,
// not copied there at the end: a run that crashes keeps it.
func TestStderrLogIsWrittenInTheRunsDirectoryAsItGoes(t *testing.T) {
	dir := t.TempDir()
	script := `echo hello-from-stderr >&2; exec ` + npmBin(t, "mcp-server-everything") + ` stdio`
	p := NewPool(Options{})
	h, err := p.Add(Server{Name: "wrapped", Command: "sh", Args: []string{"-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	p.StartIn(dir)
	defer p.Close()
	toolsOf(t, p.Tools("a", []Handle{h}, nil, nil))
	log := filepath.Join(dir, "mcp_wrapped_stderr.log")
	if got := p.StderrLogs()["wrapped"]; got != log {
		t.Errorf("stderr log at %q, want %q", got, log)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "hello-from-stderr") {
		t.Errorf("while the server runs, %s = %q, %v", log, b, err)
	}
}

// A server that failed to start is started again by RetryFailed once its
// back-off has passed, and the agents get its tools on their next
// resolve; before the back-off has passed nothing is started.
func TestFailedServerIsRetriedAfterItsBackoff(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "up")
	var mu sync.Mutex
	var warnings []string
	warn := func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	p, hs := started(t, Options{LogDir: dir, Warn: warn, RetryBackoff: time.Hour}, flaky(t, flag))
	src := p.Tools("a", hs, nil, nil)
	if set := toolsOf(t, src); len(set.Names()) != 0 {
		t.Fatalf("tools of a server that did not start: %v", set.Names())
	}
	log := filepath.Join(dir, "mcp_flaky_stderr.log")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.RetryFailed() // an hour has not passed
	if set := toolsOf(t, src); len(set.Names()) != 0 || countLines(t, log, "down")+countLines(t, log, "up") != 1 {
		t.Fatalf("within the back-off: tools %v, log %q; want no new start", set.Names(), tailOf(log, 200))
	}
	p.opts.RetryBackoff = time.Nanosecond // the hour has passed
	p.RetryFailed()
	set := toolsOf(t, src)
	if got := call(t, set, "mcp__flaky__echo", `{"message":"back"}`); got.IsError || !strings.Contains(got.Content, "back") {
		t.Errorf("after the retry, echo = %+v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) == 0 || !strings.Contains(warnings[0], "exit code 1") {
		t.Errorf("warnings %q: want the first start's failure", warnings)
	}
}

func TestRetryBackoffDoublesUpToFiveMinutes(t *testing.T) {
	p := NewPool(Options{RetryBackoff: 10 * time.Second})
	var got []time.Duration
	for fails := 1; fails <= 8; fails++ {
		got = append(got, p.backoff(fails))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
		5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("back-offs %v, want %v", got, want)
	}
}

// A server that dies and whose command now fails: each call tries to
// start it again and fails, until the breaker opens; then calls are
// refused at once, saying so, and no process is started.
func TestBreakerOpensOnARealFailingServer(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "up")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, hs := started(t, Options{LogDir: dir, BreakerFailures: 2, BreakerCooldown: time.Hour}, flaky(t, flag))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	if got := call(t, set, "mcp__flaky__echo", `{"message":"hi"}`); got.IsError {
		t.Fatalf("echo = %+v", got)
	}
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	s := hs[0].s
	s.mu.Lock()
	pid := s.conn.cmd.Process.Pid
	s.mu.Unlock()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "mcp_flaky_stderr.log")
	for i := range 2 {
		got := call(t, set, "mcp__flaky__echo", `{"message":"hi"}`)
		if !got.IsError || !strings.Contains(got.Content, "failed to start") || !strings.Contains(got.Content, "exit code 1") {
			t.Errorf("call %d after the server died = %+v, want its restart's failure", i+1, got)
		}
	}
	starts := countLines(t, log, "down")
	got := call(t, set, "mcp__flaky__echo", `{"message":"hi"}`)
	if !got.IsError || !strings.Contains(got.Content, "MCP server flaky is paused after 2 failures in a row") {
		t.Errorf("third call = %+v, want the breaker's refusal", got)
	}
	if n := countLines(t, log, "down"); n != starts || starts != 2 {
		t.Errorf("%d failed starts before the breaker opened, %d after: want 2 and no more", starts, n)
	}
}

// notifications/tools/list_changed: the server's tools are listed again
// and an agent's next resolve has the new tool (an in-process go-sdk
// server over streamable HTTP, which adds a tool while connected).
func TestToolListChangedRefreshesTheAgentsTools(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "changing", Version: "1"}, nil)
	echo := func(name string) (*sdk.Tool, sdk.ToolHandler) {
		return &sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " ran"}}}, nil
			}
	}
	srv.AddTool(echo("first"))
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the pool's Close (cleanups run last first): the client holds a stream open
	p, handles := started(t, Options{}, Server{Name: "changing", Type: StreamableHTTP, URL: hs.URL})
	src := p.Tools("a", handles, nil, nil)
	if set := toolsOf(t, src); !slices.Equal(set.Names(), []string{"mcp__changing__first"}) {
		t.Fatalf("tools %v", set.Names())
	}
	srv.AddTool(echo("second"))
	// The notification and the new listing arrive in the background: wait
	// (boundedly) for the resolve to show the new tool.
	var set *tool.Set
	for range 200 {
		if set = toolsOf(t, src); len(set.Names()) == 2 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if got := call(t, set, "mcp__changing__second", `{}`); got.IsError || got.Content != "second ran" {
		t.Errorf("the tool added while connected: %+v (tools %v)", got, set.Names())
	}
	if !slices.Contains(set.Names(), "mcp__changing__first") {
		t.Errorf("tools after the change %v", set.Names())
	}
}
