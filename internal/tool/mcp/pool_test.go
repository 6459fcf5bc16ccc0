package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/tool"
)

func TestMain(m *testing.M) {
	if os.Getenv(bigServerEnv) != "" {
		serveBig() // this test binary is the server of a test (bigresult_test.go)
		return
	}
	goleak.VerifyTestMain(m)
}

// toolsOf resolves a source into a set.
func toolsOf(t *testing.T, src tool.Source) *tool.Set {
	t.Helper()
	tools, err := src.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.NewSet(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func call(t *testing.T, set *tool.Set, name, args string) tool.Result {
	t.Helper()
	tl, ok := set.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s; have %v", name, set.Names())
	}
	return tool.Invoke(ctxT(t), tl, args, 0)
}

func checkEverything(t *testing.T, cfg Server) {
	p, hs := started(t, Options{}, cfg)
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__trigger-long-running-operation"} {
		if _, ok := set.Lookup(want); !ok {
			t.Errorf("tool %s missing; have %v", want, set.Names())
		}
	}
	if got := call(t, set, "mcp__everything__echo", `{"message":"hello there"}`); got.IsError || !strings.Contains(got.Content, "hello there") {
		t.Errorf("echo = %+v", got)
	}
	if got := call(t, set, "mcp__everything__get-sum", `{"a":2,"b":40}`); got.IsError || !strings.Contains(got.Content, "42") {
		t.Errorf("get-sum = %+v", got)
	}
	// A tool error reaches the model as an error result, not a crash.
	if got := call(t, set, "mcp__everything__get-sum", `{"a":"two","b":40}`); !got.IsError || got.Content == "" {
		t.Errorf("get-sum with a string argument = %+v, want an error result saying why", got)
	}
	// The definitions carry the server's schema.
	tl, _ := set.Lookup("mcp__everything__get-sum")
	props, _ := tl.Def().Parameters["properties"].(map[string]any)
	if _, ok := props["a"]; !ok {
		t.Errorf("get-sum parameters = %v, want properties a and b", tl.Def().Parameters)
	}
}

func TestStdioServerListsAndCallsTools(t *testing.T) { checkEverything(t, everything(t)) }

func TestStreamableHTTPServerListsAndCallsTools(t *testing.T) { checkEverything(t, everythingHTTP(t)) }

func TestSSEServerListsAndCallsTools(t *testing.T) { checkEverything(t, everythingSSE(t)) }

// Configured headers go with every request (an auth token, say): a
// proxy in front of the server records them.
func TestHTTPHeadersAreSent(t *testing.T) {
	srv := everythingHTTP(t)
	target, _ := url.Parse(srv.URL)
	var mu sync.Mutex
	var seen []string
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	srv.URL = front.URL + target.Path
	srv.Headers = map[string]string{"Authorization": "Bearer s3cret"}
	p, hs := started(t, Options{Warn: func(s string) { t.Log(s) }}, srv)
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	if got := call(t, set, "mcp__everything__echo", `{"message":"hi"}`); got.IsError {
		t.Fatal(got.Content)
	}
	p.Close() // ends the SSE stream the proxy holds open
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || slices.ContainsFunc(seen, func(h string) bool { return h != "Bearer s3cret" }) {
		t.Errorf("Authorization headers seen = %q, want the configured one on every request", seen)
	}
}

func TestACallThatOverrunsItsTimeoutSaysSo(t *testing.T) {
	srv := everything(t)
	srv.CallTimeout = 300 * time.Millisecond
	p, hs := started(t, Options{}, srv)
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	got := call(t, set, "mcp__everything__trigger-long-running-operation", `{"duration":30,"steps":1}`)
	if !got.IsError || !strings.Contains(got.Content, "timed out: no result after 300ms") {
		t.Errorf("overrunning call = %+v, want a timeout error result", got)
	}
	// The server is still usable.
	if got := call(t, set, "mcp__everything__echo", `{"message":"still here"}`); got.IsError {
		t.Errorf("after a timeout: %+v", got)
	}
}

func TestConcurrentCallsShareOneServer(t *testing.T) {
	p, hs := started(t, Options{}, everything(t))
	// A second agent listing the same server gets the same process.
	h2, err := p.Add(everything(t))
	if err != nil {
		t.Fatal(err)
	}
	if h2.s != hs[0].s {
		t.Fatal("the same server config added twice made two servers")
	}
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := range 20 {
		wg.Go(func() {
			got := call(t, set, "mcp__everything__get-sum", `{"a":`+itoa(i)+`,"b":1000}`)
			if got.IsError || !strings.Contains(got.Content, itoa(i+1000)) {
				errs <- got.Content
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent call got %q", e)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestProgressNotificationsReachTheProgressHook(t *testing.T) {
	p, hs := started(t, Options{}, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	var mu sync.Mutex
	var got []string
	ctx := tool.WithProgress(ctxT(t), func(p tool.Progress) {
		mu.Lock()
		got = append(got, p.String())
		mu.Unlock()
	})
	tl, _ := set.Lookup("mcp__everything__trigger-long-running-operation")
	res := tool.Invoke(ctx, tl, `{"duration":0.3,"steps":3}`, 0)
	if res.IsError || !strings.Contains(res.Content, "completed") {
		t.Fatalf("long-running operation = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"mcp__everything__trigger-long-running-operation: 1/3",
		"mcp__everything__trigger-long-running-operation: 2/3",
		"mcp__everything__trigger-long-running-operation: 3/3",
	}
	// The last notification may be handled after the result has arrived,
	// when the call no longer listens: the first ones must be there, in order.
	if len(got) < 2 || !slices.Equal(got, want[:len(got)]) {
		t.Errorf("progress = %q, want (a prefix of at least 2 of) %q", got, want)
	}
}

func TestLargeResultIsTruncatedWithANote(t *testing.T) {
	p, hs := started(t, Options{ResultCap: 4096}, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	big := strings.Repeat("abcdefghij", 2000) // 20 000 bytes
	got := call(t, set, "mcp__everything__echo", `{"message":"`+big+`"}`)
	if got.IsError {
		t.Fatal(got.Content)
	}
	body, note, ok := strings.Cut(got.Content, "\n[result truncated: ")
	if !ok {
		t.Fatalf("a 20 kB result under a 4 KiB cap has no truncation note: %d bytes", len(got.Content))
	}
	if len(body) != 4096 {
		t.Errorf("kept %d bytes, want the cap, 4096", len(body))
	}
	if !strings.Contains(note, "showing the first 4.0 KiB of") || !strings.Contains(note, "cut]") {
		t.Errorf("note = %q, want what was kept and what was cut", note)
	}
}

func TestImagesAndResourcesAreDescribed(t *testing.T) {
	p, hs := started(t, Options{}, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	if got := call(t, set, "mcp__everything__get-tiny-image", `{}`); got.IsError || !strings.Contains(got.Content, "[image: image/png, ") {
		t.Errorf("get-tiny-image = %q, want the image described with its type and size", got.Content)
	}
	if got := call(t, set, "mcp__everything__get-structured-content", `{"location":"New York"}`); got.IsError || !strings.Contains(got.Content, "temperature") {
		t.Errorf("get-structured-content = %q, want the structured content as JSON", got.Content)
	}
	if got := call(t, set, "mcp__everything__get-resource-links", `{"count":2}`); got.IsError || !strings.Contains(got.Content, "[resource link: ") {
		t.Errorf("get-resource-links = %q, want links named", got.Content)
	}
}

func TestFilesystemServerReadsOnlyItsDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the secret is 7"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(outside, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := Server{Name: "fs", Command: npmBin(t, "mcp-server-filesystem"), Args: []string{dir}}
	p, hs := started(t, Options{}, fs)
	set := toolsOf(t, p.Tools("a", hs, []string{"read_text_file", "mcp__fs__list_allowed_directories"}, nil))
	if got := set.Names(); !slices.Equal(got, []string{"mcp__fs__read_text_file", "mcp__fs__list_allowed_directories"}) {
		t.Errorf("filtered tools = %v", got)
	}
	if got := call(t, set, "mcp__fs__read_text_file", `{"path":"`+filepath.Join(dir, "notes.txt")+`"}`); got.IsError || !strings.Contains(got.Content, "the secret is 7") {
		t.Errorf("read inside = %+v", got)
	}
	if got := call(t, set, "mcp__fs__read_text_file", `{"path":"`+outside+`"}`); !got.IsError || strings.Contains(got.Content, "not yours") {
		t.Errorf("read outside its directory = %+v, want an error result", got)
	}
}

func TestFiltersAcceptBothNamesAndWarnAboutMisses(t *testing.T) {
	var mu sync.Mutex
	var warnings []string
	warn := func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	srv := everything(t)
	srv.Exclude = []string{"mcp__everything__get-env", "no-such-tool"}
	p, hs := started(t, Options{Warn: warn}, srv)
	set := toolsOf(t, p.Tools("a", hs, []string{"echo", "mcp__everything__get-sum", "get-env", "mcp__everything__echoo"}, nil))
	if got := set.Names(); !slices.Equal(got, []string{"mcp__everything__echo", "mcp__everything__get-sum"}) {
		t.Errorf("tools = %v, want echo and get-sum (get-env excluded by the server)", got)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{`mcp_servers.everything.exclude_tools entry "no-such-tool" matches no MCP tool`,
		`allowed_tools entry "mcp__everything__echoo" matches no MCP tool; the tools are: mcp__everything__echo,`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings:\n%s\nwant one containing %q", joined, want)
		}
	}
	if len(warnings) != 2 {
		t.Errorf("got %d warnings, want 2:\n%s", len(warnings), joined)
	}
}

func TestServerThatFailsToStartSaysWhyAndIsLeftOut(t *testing.T) {
	dir := t.TempDir()
	missing := Server{Name: "ghost", Command: filepath.Join(dir, "no-such-server")}
	crashes := Server{Name: "crash", Command: "sh", Args: []string{"-c", "echo 'cannot find config.json' >&2; exit 3"}}
	unset := Server{Name: "keyed", Command: "true", UnsetVars: []string{"BRAVE_API_KEY"}}
	var mu sync.Mutex
	var warnings []string
	warn := func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	p, hs := started(t, Options{LogDir: dir, Warn: warn}, missing, crashes, unset, everything(t))
	// The agent keeps the server that works.
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	if _, ok := set.Lookup("mcp__everything__echo"); !ok || slices.ContainsFunc(set.Names(), func(n string) bool { return !strings.HasPrefix(n, "mcp__everything__") }) {
		t.Errorf("tools = %v, want only the working server's", set.Names())
	}
	mu.Lock()
	joined := strings.Join(warnings, "\n")
	mu.Unlock()
	for _, want := range []string{
		"agent a: its tools are left out: MCP server ghost failed to start", "no-such-server",
		"MCP server crash failed to start", `command "sh -c echo 'cannot find config.json' >&2; exit 3"`, "exit code 3", "cannot find config.json", "mcp_crash_stderr.log",
		"MCP server keyed cannot start", "BRAVE_API_KEY, which is not set",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings do not contain %q:\n%s", want, joined)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "mcp_crash_stderr.log")); err != nil || !strings.Contains(string(b), "cannot find config.json") {
		t.Errorf("stderr log = %q, %v", b, err)
	}
}

func TestLostConnectionIsReestablishedOnce(t *testing.T) {
	p, hs := started(t, Options{}, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	s := hs[0].s
	s.mu.Lock()
	pid := s.conn.cmd.Process.Pid
	s.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := call(t, set, "mcp__everything__echo", `{"message":"again"}`); got.IsError || !strings.Contains(got.Content, "again") {
		t.Fatalf("call after the server died = %+v, want it reconnected", got)
	}
	s.mu.Lock()
	newPid := s.conn.cmd.Process.Pid
	s.mu.Unlock()
	if newPid == pid {
		t.Error("the call did not start a new server process")
	}
}

func TestCloseKillsTheServersProcessGroup(t *testing.T) {
	// The server starts a child of its own: Close must take both.
	dir := t.TempDir()
	childPid := filepath.Join(dir, "child.pid")
	script := `sleep 300 & echo $! > ` + childPid + `; exec ` + npmBin(t, "mcp-server-everything") + ` stdio`
	p, hs := started(t, Options{}, Server{Name: "wrapped", Command: "sh", Args: []string{"-c", script}})
	toolsOf(t, p.Tools("a", hs, nil, nil))
	s := hs[0].s
	s.mu.Lock()
	pid := s.conn.cmd.Process.Pid
	s.mu.Unlock()
	b, err := os.ReadFile(childPid)
	if err != nil {
		t.Fatal(err)
	}
	child := strings.TrimSpace(string(b))
	p.Close()
	if gone(itoa(pid)) != nil || gone(child) != nil {
		t.Errorf("after Close: server %d alive=%v, its child %s alive=%v", pid, alive(itoa(pid)), child, alive(child))
	}
}

// gone waits (a bounded while: SIGKILL is delivered asynchronously) for
// a process to be gone.
func gone(pid string) error {
	for range 100 {
		if !alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("process " + pid + " is still alive")
}

// alive reports whether a process exists and is not a zombie.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// An MCP image result reaches the agent as the picture itself (for the
// providers that take images in a tool result) and as a description in
// the text (for those that do not).
func TestImageResultCarriesThePicture(t *testing.T) {
	p, hs := started(t, Options{}, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	got := call(t, set, "mcp__everything__get-tiny-image", `{}`)
	if got.IsError {
		t.Fatal(got.Content)
	}
	if len(got.Images) != 1 {
		t.Fatalf("images = %d, want the one tiny image; content %q", len(got.Images), got.Content)
	}
	img := got.Images[0]
	if img.MIME != "image/png" {
		t.Errorf("mime = %q, want image/png", img.MIME)
	}
	// The bytes are the decoded picture, not its base64 text.
	if len(img.Data) < 8 || string(img.Data[1:4]) != "PNG" {
		t.Errorf("data starts %q, want the PNG signature", img.Data[:min(8, len(img.Data))])
	}
	if !strings.Contains(got.Content, "[image: image/png, ") {
		t.Errorf("content %q does not describe the image", got.Content)
	}
}
