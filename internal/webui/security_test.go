package webui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/webui"
)

// A page of another origin, a page reached through a rebound name, a
// client without the token or with a form's body can neither start a run
// nor read a run's events or files, even holding the token: nothing runs,
// nothing is logged, nothing leaks.
func TestForeignPagesCannotStartRunsOrReadEvents(t *testing.T) {
	f := start(t)
	// A run to read, started properly.
	run := f.json(t, http.MethodPost, "/api/runs", `{"config":"fast","question":"secret question"}`, http.StatusCreated)
	id := run["id"].(string)
	f.events(t, id, nil, nil)
	logs, _ := filepath.Glob(filepath.Join(f.root, "log_*"))

	start := `{"config":"fast","question":"billed to you"}`
	for _, c := range []struct {
		name         string
		method, path string
		body         string
		hdr          map[string]string
		want         int
	}{
		{"cross-origin page starts a run", "POST", "/api/runs", start, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-origin page, Origin only", "POST", "/api/runs", start, map[string]string{"Origin": "https://evil.example"}, 403},
		{"another localhost port (same site, not same origin)", "POST", "/api/runs", start, map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, 403},
		{"sandboxed frame (Origin null)", "POST", "/api/runs", start, map[string]string{"Origin": "null"}, 403},
		{"rebound name starts a run", "POST", "/api/runs", start, map[string]string{"Host": "evil.example"}, 403},
		{"rebound name, same origin as itself", "POST", "/api/runs", start, map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 403},
		{"no token", "POST", "/api/runs", start, map[string]string{"Authorization": ""}, 401},
		{"wrong token", "POST", "/api/runs", start, map[string]string{"Authorization": "Bearer guess"}, 401},
		{"form body", "POST", "/api/runs", "question=x", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"cross-origin page reads events", "GET", "/api/events?run=" + id, "", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-site script tag reads events", "GET", "/api/events?run=" + id, "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"rebound name reads events", "GET", "/api/events?run=" + id, "", map[string]string{"Host": "evil.example"}, 403},
		{"no token reads events", "GET", "/api/events?run=" + id, "", map[string]string{"Authorization": ""}, 401},
		{"rebound name reads the runs", "GET", "/api/runs", "", map[string]string{"Host": "evil.example"}, 403},
		{"cross-origin page reads files", "GET", "/api/files?run=" + id, "", map[string]string{"Origin": "https://evil.example"}, 403},
		{"cross-origin page cancels", "POST", "/api/cancel", `{"run":"` + id + `"}`, map[string]string{"Origin": "https://evil.example"}, 403},
		{"rebound name loads the page", "GET", "/", "", map[string]string{"Host": "evil.example"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := f.do(t, c.method, c.path, c.body, c.hdr)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%d, want %d: %s", resp.StatusCode, c.want, b)
			}
			if strings.Contains(string(b), "secret question") || strings.Contains(string(b), "run_started") {
				t.Fatalf("the refusal leaks the run: %s", b)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("a CORS header lets the page read the answer")
			}
		})
	}
	list := f.json(t, http.MethodGet, "/api/runs", "", http.StatusOK)["runs"].([]any)
	if len(list) != 1 {
		t.Fatalf("a refused request started a run: %v", list)
	}
	if after, _ := filepath.Glob(filepath.Join(f.root, "log_*")); len(after) != len(logs) {
		t.Fatalf("a refused request logged a run: %v", after)
	}
	// The page itself (same origin, as a browser sends it) is served.
	f.json(t, http.MethodGet, "/api/info", "", http.StatusOK)
	resp := f.do(t, "GET", "/api/runs", "", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": f.srv.URL})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the page's own request: %d", resp.StatusCode)
	}
}

// The file browser stays inside the run's log directory: "..", absolute
// paths and a symbolic link planted there reach nothing outside it, and
// an id that is not a run of the logs opens nothing.
func TestFilesStayInsideTheLogDirectory(t *testing.T) {
	f := start(t)
	run := f.json(t, http.MethodPost, "/api/runs", `{"config":"fast","question":"q"}`, http.StatusCreated)
	id := run["id"].(string)
	f.events(t, id, nil, nil)
	meta := f.json(t, http.MethodGet, "/api/run?id="+id, "", http.StatusOK)
	logDir := filepath.Join(f.root, meta["log"].(string))
	secret := filepath.Join(f.dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("do not show"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.dir, filepath.Join(logDir, "escape")); err != nil {
		t.Fatal(err)
	}
	listing := f.json(t, http.MethodGet, "/api/files?run="+id+"&path=/", "", http.StatusOK)
	if !strings.Contains(jsonString(listing), "coordination_events.jsonl") {
		t.Fatalf("listing %v", listing)
	}
	file := f.json(t, http.MethodGet, "/api/files?run="+id+"&path=/status.json", "", http.StatusOK)
	if !strings.Contains(file["text"].(string), `"question"`) {
		t.Fatalf("status.json: %v", file)
	}
	for _, p := range []string{"../../secret.txt", "/../../../secret.txt", secret, "escape/secret.txt", "escape"} {
		resp := f.do(t, http.MethodGet, "/api/files?run="+id+"&path="+p, "", nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "do not show") {
			t.Errorf("path %q: %d %s", p, resp.StatusCode, b)
		}
	}
	for _, bad := range []string{"log:../..", "log:" + f.dir, "log:log_x/../..", "nope"} {
		resp := f.do(t, http.MethodGet, "/api/files?run="+bad+"&path=/", "", nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("run %q: %d", bad, resp.StatusCode)
		}
	}
}

func jsonString(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				b.WriteString(k + " ")
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteString(v + " ")
		}
	}
	walk(v)
	return b.String()
}

// The page is the embedded bundle, served with a policy that lets it load
// nothing from another origin and run no inline script; the bundle itself
// names no other origin (no CDN at run time).
func TestPageIsTheEmbeddedBundle(t *testing.T) {
	f := start(t)
	for path, want := range map[string]string{"/": "text/html", "/app.js": "javascript", "/style.css": "text/css",
		"/md.js": "javascript", "/state.js": "javascript", "/sse.js": "javascript"} {
		resp := f.do(t, http.MethodGet, path, "", map[string]string{"Authorization": ""})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), want) {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		for _, foreign := range []string{`src="http`, `href="http`, `from 'http`, `from "http`, `import('http`, "@import", "//cdn"} {
			if strings.Contains(string(b), foreign) {
				t.Errorf("%s loads from another origin: %q", path, foreign)
			}
		}
	}
	resp := f.do(t, http.MethodGet, "/api/nope", "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown API route: %d", resp.StatusCode)
	}
}

// Under massgen serve the UI sits behind the server's Host check and
// needs its API key; the page itself loads without it.
func TestUnderServeBehindTheAPIKeyAndHostCheck(t *testing.T) {
	dir := t.TempDir()
	ui := webui.New(webui.Deps{Env: app.Env{WorkDir: dir, Getenv: func(string) string { return "" }, DotEnvLoaded: true, Stderr: io.Discard},
		Token: "s3cret"})
	srv := server.New(server.Deps{APIKey: "s3cret", UI: ui.Handler("/ui"),
		Run: func(context.Context, server.RunRequest) (*server.RunResult, error) { panic("no API run in this test") }})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer func() { _ = ui.Shutdown(t.Context()) }()
	get := func(path, key, host string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, hs.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, key, host string
		want            int
	}{
		{"/ui/", "", "", 200},
		{"/ui", "", "", 200}, // redirected to /ui/
		{"/ui/api/info", "", "", 401},
		{"/ui/api/info", "wrong", "", 401},
		{"/ui/api/info", "s3cret", "", 200},
		{"/ui/api/runs", "s3cret", "", 200},
		{"/ui/api/info", "s3cret", "evil.example", 403},
		{"/ui/", "", "evil.example", 403},
	} {
		if got := get(c.path, c.key, c.host); got != c.want {
			t.Errorf("GET %s key %q host %q: %d, want %d", c.path, c.key, c.host, got, c.want)
		}
	}
}
