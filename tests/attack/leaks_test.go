package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// echoProvider answers every request 401 with the key it was sent
// echoed in the body, plus terminal escapes, as a hostile or careless
// provider (or a proxy) may.
func echoProvider(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key") + r.URL.Query().Get("key")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		msg := fmt.Sprintf("Incorrect API key provided: %s \x1b]0;pwned-title\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07 You can find your API key at https://example.invalid.", key)
		b := fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","code":"invalid_api_key"},"type":"error"}`, msg)
		io.WriteString(w, b)
	}))
	t.Cleanup(s.Close)
	return s
}

// providerConfig is one agent of backend typ on the echoing provider.
func providerConfig(typ, base string) string {
	model := map[string]string{"openai": "gpt-4o-mini", "claude": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash", "chatcompletion": "some-model", "grok": "grok-4"}[typ]
	if typ == "claude" || typ == "gemini" {
		base = strings.TrimSuffix(base, "/v1")
	}
	extra := ""
	if typ == "chatcompletion" {
		extra = "\n    api_key: " + canaryEnv["OPENAI_API_KEY"] + "x"
	}
	return fmt.Sprintf("agent:\n  id: a\n  backend:\n    type: %s\n    model: %s\n    base_url: %s%s\n", typ, model, base, extra)
}

var escapeRE = []string{"\x1b]", "\x1b[2J", "\x07", "\x1bP", "\x9b"}

// noEscapes fails t when s holds a terminal control sequence.
func noEscapes(t *testing.T, what, s string) {
	t.Helper()
	for _, e := range escapeRE {
		if strings.Contains(s, e) {
			t.Errorf("%s holds the terminal sequence %q:\n%q", what, e, excerpt(s, e))
		}
	}
}

// Class 11 and terminal escapes: a key a provider echoes in its error
// appears nowhere (stderr, stdout, the log directory, the sessions
// database, serve's error bodies); the escapes in it never reach the
// terminal raw.
func TestSecretsEchoedByAProvider(t *testing.T) {
	for _, typ := range []string{"openai", "claude", "gemini", "chatcompletion"} {
		attempt(t, "run: "+typ+" backend's 401 echoing the key", func(t *testing.T) {
			t.Parallel()
			p := echoProvider(t)
			dir := tempDir(t)
			writeFiles(t, dir, map[string]string{"c.yaml": providerConfig(typ, p.URL+"/v1")})
			r := massgen(t, dir, runOpts{timeout: 60 * time.Second}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "q")
			if r.code == 0 {
				t.Errorf("the run succeeded against a provider that refuses everything:\n%s", r)
			}
			if !strings.Contains(r.stderr, "401") && !strings.Contains(strings.ToLower(r.stderr), "api key") {
				t.Logf("the error does not say what happened:\n%s", r)
			}
			noCanary(t, r)
			noEscapes(t, "stderr", r.stderr)
		})
		attempt(t, "automation: "+typ+" backend's 401 echoing the key", func(t *testing.T) {
			t.Parallel()
			p := echoProvider(t)
			dir := tempDir(t)
			writeFiles(t, dir, map[string]string{"c.yaml": providerConfig(typ, p.URL+"/v1")})
			r := massgen(t, dir, runOpts{timeout: 60 * time.Second}, "--automation", "--debug", "--log-dir", "logs", "--config", "c.yaml", "q")
			noCanary(t, r)
			noEscapes(t, "stderr", r.stderr)
			noEscapes(t, "stdout", r.stdout)
		})
	}
	for _, route := range []string{"/v1/chat/completions", "/v1/responses", "/v1/chat/completions (stream)", "/v1/responses (stream)"} {
		attempt(t, "serve: "+route+" error body", func(t *testing.T) {
			t.Parallel()
			p := echoProvider(t)
			dir := tempDir(t)
			writeFiles(t, dir, map[string]string{"c.yaml": providerConfig("openai", p.URL+"/v1")})
			d := startDaemon(t, dir, nil, "serve", "--port", "0", "--config", "c.yaml", "--log-dir", "logs")
			stream := strings.HasSuffix(route, "(stream)")
			path := strings.TrimSuffix(route, " (stream)")
			body := fmt.Sprintf(`{"model":"massgen","stream":%v,"messages":[{"role":"user","content":"q"}]}`, stream)
			if strings.Contains(path, "responses") {
				body = fmt.Sprintf(`{"model":"massgen","stream":%v,"input":"q"}`, stream)
			}
			resp, err := http.Post("http://"+d.addr+path, "application/json", bytes.NewBufferString(body))
			must(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("%s: %d %s", route, resp.StatusCode, tail(string(b), 600))
			if strings.Contains(string(b), canary) {
				t.Errorf("the response body holds the key:\n%s", excerpt(string(b), canary))
			}
			noEscapes(t, "the response body", string(b))
			// The run's event feed carries its failures as data: masked too.
			if run := resp.Header.Get("X-Massgen-Run-Id"); run != "" {
				fr, err := http.Get("http://" + d.addr + "/v1/runs/" + run + "/events")
				must(t, err)
				fb, _ := io.ReadAll(fr.Body)
				fr.Body.Close()
				if strings.Contains(string(fb), canary) {
					t.Errorf("the run's event feed holds the key:\n%s", excerpt(string(fb), canary))
				}
				noEscapes(t, "the run's event feed", string(fb))
			} else {
				t.Error("no X-Massgen-Run-Id: the event feed cannot be checked")
			}
			time.Sleep(300 * time.Millisecond)
			noCanary(t, result{dir: dir, stderr: d.stderr.String()})
			noEscapes(t, "serve's stderr", d.stderr.String())
		})
	}
}

// Terminal escapes a hostile model or command puts in what the plain
// display prints on stderr.
func TestTerminalEscapesOnStderr(t *testing.T) {
	needBwrap(t)
	esc := "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31m"
	cases := map[string]team{
		"in an answer":        {answer: "an answer " + esc},
		"in a vote reason":    {coord: []call{sh("true")}},
		"in tool arguments":   {coord: []call{sh("echo '" + esc + "'")}},
		"in a command output": {coord: []call{sh(`printf '\033]0;pwned\007\033]52;c;cHduZWQ=\007\033[2J'`)}},
		"in the final answer": {final: "final " + esc},
	}
	for name, s := range cases {
		attempt(t, name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			var r result
			if name == "in a vote reason" {
				must(t, writeTeamWithReason(dir, esc))
				r = massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
			} else {
				r = runTeam(t, dir, s, runOpts{})
			}
			noEscapes(t, "stderr", r.stderr)
		})
	}
}

func writeTeamWithReason(dir, reason string) error {
	s := team{}
	y := strings.Replace(string(s.yaml()), `"reason": "mine"`, `"reason": `+string(must1(json.Marshal(reason))), 1)
	return writeFile(filepath.Join(dir, "c.yaml"), y)
}

// An MCP server's own credentials (a token in its env, on its command
// line) must not reach stderr or the logs when the server fails to start
// and prints them: the warning is masked as a provider's error is.
func TestMCPServerCredentialsInItsFailure(t *testing.T) {
	needBwrap(t)
	const token = "ghp_CANARYmcpServerToken0123456789ab"
	attempt(t, "mcp: a failing server prints its token from env and argv", func(t *testing.T) {
		dir := tempDir(t)
		s := team{mcp: map[string]any{"gh": map[string]any{
			"command": "sh", "args": []string{"-c", `echo "bad credentials: $GH_TOKEN ($0)" >&2; exit 1`, token},
			"env": map[string]any{"GH_TOKEN": token}}}}
		r := runTeam(t, dir, s, runOpts{})
		if !strings.Contains(r.stderr, "MCP server gh failed to start") {
			t.Logf("the server's failure was not reported as expected:\n%s", r)
		}
		noSecret(t, token, r)
	})
}
