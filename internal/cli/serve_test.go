package cli

import (
	"bytes"
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

	"github.com/massgen/massgen/internal/app"
)

// syncBuffer is a stderr that massgen writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type serveProc struct {
	url    string
	stderr *syncBuffer
	stop   func() int // cancels the command's context and returns its exit code
	hc     *http.Client
	dir    string
}

// startServe runs `massgen serve --port 0 ARGS…` in-process and waits for
// its address.
func startServe(t *testing.T, vars map[string]string, args ...string) *serveProc {
	t.Helper()
	return startServeIn(t, t.TempDir(), vars, args...)
}

// startServeIn is startServe in working directory dir.
func startServeIn(t *testing.T, dir string, vars map[string]string, args ...string) *serveProc {
	t.Helper()
	stderr := &syncBuffer{}
	getenv := func(k string) string {
		if k == "HOME" {
			return dir
		}
		return vars[k]
	}
	ctx, cancel := context.WithCancel(t.Context())
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, append([]string{"serve", "--port", "0"}, args...),
			Env{Getenv: getenv, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, WorkDir: dir})
	}()
	tr := &http.Transport{}
	p := &serveProc{stderr: stderr, hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}, dir: dir}
	var once sync.Once
	exit := -1
	p.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case exit = <-code:
			case <-time.After(10 * time.Second):
				t.Error("massgen serve did not stop")
			}
			tr.CloseIdleConnections()
		})
		return exit
	}
	t.Cleanup(func() { p.stop() })
	addr := regexp.MustCompile(`listening on (http://[0-9.:]+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case c := <-code:
			code <- c
			t.Fatalf("massgen serve exited with %d:\n%s", c, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("massgen serve did not start:\n%s", stderr.String())
		}
	}
}

func (p *serveProc) post(t *testing.T, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeAnswersAndStopsOnCancel(t *testing.T) {
	p := startServe(t, nil, "--config", "@examples/sim_single_agent")
	resp, err := p.hc.Get(p.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"service":"massgen-server"`) || !strings.Contains(string(b), `"version":"`+app.Version+`"`) {
		t.Errorf("/health = %s", b)
	}
	code, body := p.post(t, "", `{"model":"massgen","messages":[{"role":"user","content":"What is 2+2?"}]}`)
	if code != 200 || !strings.Contains(body, "sim-solo") || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Fatalf("%d %s", code, body)
	}
	// The run wrote the usual logs in the working directory.
	if logs, _ := filepath.Glob(filepath.Join(p.dir, ".massgen", "massgen_logs", "log_*", "status.json")); len(logs) != 1 {
		t.Errorf("log dirs: %v", logs)
	}
	if c := p.stop(); c != 0 {
		t.Errorf("exit %d after cancel:\n%s", c, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "massgen serve: stopped") {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
}

func TestServeEnvironmentAndFlags(t *testing.T) {
	cfgDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfgDir, "mine.yaml"), []byte("agent: {id: me, backend: {type: sim, model: sim-mine}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, map[string]string{"MASSGEN_SERVER_DEFAULT_MODEL": "sim-env", "MASSGEN_SERVER_API_KEY": "from-env"},
		"--api-key", "from-flag", "--config-dir", cfgDir, "--no-logs")
	msg := `{"model":"%s","messages":[{"role":"user","content":"q"}]}`
	if code, body := p.post(t, "from-env", strings.Replace(msg, "%s", "massgen", 1)); code != 401 {
		t.Errorf("the flag's key must win over the environment's: %d %s", code, body)
	}
	if code, body := p.post(t, "from-flag", strings.Replace(msg, "%s", "massgen", 1)); code != 200 || !strings.Contains(body, "sim-env") {
		t.Errorf("massgen with MASSGEN_SERVER_DEFAULT_MODEL: %d %s", code, body)
	}
	if code, body := p.post(t, "from-flag", strings.Replace(msg, "%s", "massgen/mine", 1)); code != 200 || !strings.Contains(body, "sim-mine") {
		t.Errorf("massgen/mine from --config-dir: %d %s", code, body)
	}
	if logs, _ := filepath.Glob(filepath.Join(p.dir, ".massgen", "massgen_logs", "*")); len(logs) != 0 {
		t.Errorf("--no-logs wrote %v", logs)
	}
}

func TestServeRejectsABadDefaultConfigAtStart(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "serve", "--port", "0", "--config", "missing.yaml")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "config file not found") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = massgen(t, t.Context(), nil, nil, "serve", "--port", "0", "--config", "@examples/sim_single_agent", "--default-model", "sim")
	if r.code != ExitConfig {
		t.Errorf("--config with --default-model: exit %d", r.code)
	}
}

func TestServeCORSOriginsFromFlagAndEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
	}{
		{"flag", nil, []string{"--cors-origins", "https://a.example, https://b.example"}},
		{"environment", map[string]string{"MASSGEN_SERVER_CORS_ORIGINS": "https://b.example"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, tc.vars, append([]string{"--config", "@examples/sim_single_agent", "--no-logs"}, tc.args...)...)
			req, _ := http.NewRequest(http.MethodOptions, p.url+"/v1/chat/completions", nil)
			req.Header.Set("Origin", "https://b.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := p.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://b.example" {
				t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
			}
		})
	}
}

func TestServeAllowedHostsFromFlagAndEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want map[string]int // Host → status
	}{
		{"none", nil, nil, map[string]int{"proxy.example": 403, "localhost": 200}},
		{"flag", map[string]string{"MASSGEN_SERVER_ALLOWED_HOSTS": "other.example"}, []string{"--allowed-hosts", "proxy.example, api.example"},
			map[string]int{"proxy.example:443": 200, "api.example": 200, "other.example": 403, "evil.example": 403}},
		{"environment", map[string]string{"MASSGEN_SERVER_ALLOWED_HOSTS": "proxy.example"}, nil,
			map[string]int{"proxy.example": 200, "evil.example": 403}},
		{"star", nil, []string{"--allowed-hosts", "*"}, map[string]int{"evil.example": 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, tc.vars, append([]string{"--config", "@examples/sim_single_agent", "--no-logs"}, tc.args...)...)
			for host, want := range tc.want {
				req, _ := http.NewRequest(http.MethodGet, p.url+"/v1/models", nil)
				req.Host = host
				resp, err := p.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, b, want)
				}
			}
		})
	}
}

// The help is the manual: every flag shows what its value is (no bare
// "string" or a word lifted from backquotes) and the examples are there.
func TestServeHelpIsComplete(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "serve", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	help := r.stdout
	for _, want := range []string{"Examples:", "--allowed-hosts HOSTS", "MASSGEN_SERVER_ALLOWED_HOSTS", "--config FILE",
		"--default-model MODEL", "--api-key KEY", "--host HOST", "--port PORT", "--cors-origins ORIGINS", "--config-dir DIR",
		"--log-dir DIR", "--max-concurrent N", "--max-queue N", "--shutdown-grace SECONDS", "Content-Type: application/json",
		"--max-body-bytes BYTES", "--no-store"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, help)
		}
	}
	placeholder := regexp.MustCompile(`--[a-z-]+ (string|int|int64|float|float64|massgen) |TODO|FIXME|XXX|…`)
	if m := placeholder.FindAllString(help, -1); m != nil {
		t.Errorf("serve --help has placeholders %q:\n%s", m, help)
	}
}

func TestServeMaxBodyBytes(t *testing.T) {
	p := startServe(t, nil, "--config", "@examples/sim_single_agent", "--no-logs", "--max-body-bytes", "300")
	small := `{"model":"massgen","messages":[{"role":"user","content":"q"}]}`
	if code, body := p.post(t, "", small); code != 200 {
		t.Errorf("a body under the limit: %d %s", code, body)
	}
	big := strings.Replace(small, `"q"`, `"`+strings.Repeat("x", 300)+`"`, 1)
	if code, body := p.post(t, "", big); code != 413 || !strings.Contains(body, "request_too_large") {
		t.Errorf("a body over the limit: %d %s", code, body)
	}
	if r := massgen(t, t.Context(), nil, nil, "serve", "--port", "0", "--max-body-bytes", "0"); r.code != ExitConfig {
		t.Errorf("--max-body-bytes 0: exit %d %s", r.code, r.stderr)
	}
}

// Responses outlive a restart of massgen serve in .massgen/sessions.db of
// its working directory; with --no-store, they are kept in memory only.
func TestServeKeepsResponsesAcrossARestart(t *testing.T) {
	respond := func(p *serveProc) string {
		t.Helper()
		req, _ := http.NewRequest("POST", p.url+"/v1/responses", strings.NewReader(`{"model":"massgen","input":"What is 2+2?"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct{ ID string }
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.ID == "" {
			t.Fatalf("POST /v1/responses: %d, %v", resp.StatusCode, err)
		}
		return r.ID
	}
	get := func(p *serveProc, id string) int {
		t.Helper()
		resp, err := p.hc.Get(p.url + "/v1/responses/" + id)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, noStore := range []bool{false, true} {
		args := []string{"--config", "@examples/sim_single_agent", "--no-logs"}
		if noStore {
			args = append(args, "--no-store")
		}
		dir := t.TempDir()
		p := startServeIn(t, dir, nil, args...)
		id := respond(p)
		if c := p.stop(); c != 0 {
			t.Fatalf("exit %d:\n%s", c, p.stderr.String())
		}
		_, err := os.Stat(filepath.Join(dir, ".massgen", "sessions.db"))
		if noStore != os.IsNotExist(err) {
			t.Errorf("--no-store %v: sessions.db: %v", noStore, err)
		}
		p = startServeIn(t, dir, nil, args...)
		want := map[bool]int{false: 200, true: 404}[noStore]
		if code := get(p, id); code != want {
			t.Errorf("--no-store %v: GET %s after a restart: %d, want %d", noStore, id, code, want)
		}
		p.stop()
	}
}
