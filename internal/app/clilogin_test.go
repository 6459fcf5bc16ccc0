package app

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/redact"
)

// Canaries of a fake Claude subscription login: tokens no part of a run
// may show.
const (
	canaryAccess  = "sk-ant-oat01-CANARY-access-7f3e9a1c5b"
	canaryRefresh = "sk-ant-ort01-CANARY-refresh-2d8b4e6f0a"
)

// codexLogin is a ChatGPT login of Codex: an unsigned id token (Codex
// reads the plan from it), canary access and refresh tokens, refreshed
// now (so Codex does not refresh it first).
func codexLogin() string {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(`{"email":"u@example.com","exp":4102444800,`+
		`"https://api.openai.com/auth":{"chatgpt_plan_type":"pro","chatgpt_account_id":"acc-1","chatgpt_user_id":"user-1"}}`) + ".sig"
	return `{"OPENAI_API_KEY":null,"tokens":{"id_token":"` + jwt + `","access_token":"` + canaryCodexAccess +
		`","refresh_token":"` + canaryCodexRefresh + `","account_id":"acc-1"},"last_refresh":"` +
		time.Now().UTC().Format(time.RFC3339) + `"}`
}

const (
	canaryCodexAccess  = "CANARY-codex-access-5c1d9e7b3a"
	canaryCodexRefresh = "CANARY-codex-refresh-8e2f6a0c4d"
)

func claudeLogin() string {
	return `{"claudeAiOauth":{"accessToken":"` + canaryAccess + `","refreshToken":"` + canaryRefresh +
		`","expiresAt":4102444800000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}`
}

// A Claude Code agent and a Codex agent with no key, on a user who logged
// in to both CLIs, run a team on the simulator on those logins: each CLI
// sends its login's token (and no key) to its endpoint; the token is in none of the run's
// logs, events, status files, output or stderr; its copy is gone once the
// run ends; the user's file is unchanged.
func TestCLIAgentRunsOnTheUsersLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Claude Code")
	}
	t.Setenv("PATH", cliPath(t, "claude_code", "codex"))
	// The simulator stands for Anthropic's endpoint here: a local one
	// gets no login otherwise.
	localEndpoint = func(string) bool { return false }
	t.Cleanup(func() { localEndpoint = isLocal })

	_, simURL := simtest.Start(t, "")
	target, _ := url.Parse(simURL)
	var mu sync.Mutex
	var auths, keys, paths []string
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths, keys = append(auths, r.Header.Get("Authorization")), append(keys, r.Header.Get("X-Api-Key"))
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	home := t.TempDir()
	login := filepath.Join(home, ".claude", ".credentials.json")
	must(t, os.MkdirAll(filepath.Dir(login), 0o700))
	must(t, os.WriteFile(login, []byte(claudeLogin()), 0o600))
	before, _ := os.Stat(login)
	codexAuth := filepath.Join(home, ".codex", "auth.json")
	must(t, os.MkdirAll(filepath.Dir(codexAuth), 0o700))
	codexFile := codexLogin()
	must(t, os.WriteFile(codexAuth, []byte(codexFile), 0o600))

	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte("agents:\n  - id: loginclaude\n    backend: {type: claude_code, model: cc-login}\n"+
		"  - id: logincodex\n    backend: {type: codex, model: codex-login}\n"), 0o644))
	base := front.URL + strings.TrimPrefix(simURL, target.Scheme+"://"+target.Host)
	vars := map[string]string{"HOME": home, "MASSGEN_CLAUDE_CODE_BASE_URL": base, "MASSGEN_CODEX_BASE_URL": base}
	var stderr bytes.Buffer
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}, Logging: Logging{Debug: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final == "" {
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}

	mu.Lock()
	if len(auths) == 0 {
		t.Fatal("Claude Code sent no request")
	}
	byCLI := map[string]int{}
	for i := range auths {
		want := "Bearer " + canaryAccess
		if !strings.HasSuffix(paths[i], "/messages") {
			want = "Bearer " + canaryCodexAccess
		}
		byCLI[want]++
		if auths[i] != want || keys[i] != "" {
			t.Errorf("request %d to %s: Authorization %q, x-api-key %q: not the login's token alone", i, paths[i], auths[i], keys[i])
		}
	}
	if byCLI["Bearer "+canaryAccess] == 0 || byCLI["Bearer "+canaryCodexAccess] == 0 {
		t.Errorf("requests on each login: %v (%v)", byCLI, paths)
	}
	mu.Unlock()

	leaks := func(what string, b []byte) {
		for _, c := range []string{canaryAccess, canaryRefresh, canaryCodexAccess, canaryCodexRefresh, "CANARY"} {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s holds the login's token %s", what, c)
			}
		}
	}
	leaks("stderr", stderr.Bytes())
	leaks("the run's output", []byte(fmt.Sprint(out.Final, out.Err)))
	files := 0
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			leaks(p, b)
			files++
		}
		return nil
	})
	if files < 3 {
		t.Errorf("only %d files under the run's directory: where are its logs and events?", files)
	}
	// The copy went with the CLI's private home.
	homes, _ := filepath.Glob(filepath.Join(os.TempDir(), cliHomePrefix+"*-login*-*"))
	for _, h := range homes {
		if strings.HasPrefix(filepath.Base(h), cliHomePrefix+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("the CLI's home %s (with the login's copy) outlived the run", h)
		}
	}
	// The user's file is as it was.
	after, _ := os.Stat(login)
	if b, _ := os.ReadFile(login); string(b) != claudeLogin() || !after.ModTime().Equal(before.ModTime()) || after.Mode().Perm() != 0o600 {
		t.Errorf("the user's login file changed: %q %v", b, after.Mode())
	}
	if b, _ := os.ReadFile(codexAuth); string(b) != codexFile {
		t.Errorf("the user's auth.json changed: %q", b)
	}
}

// A CLI agent with neither a key nor a login does not start, and the
// error names both ways to give it one; with a login and no key it
// starts on the login; a local endpoint needs neither.
func TestCLIAgentWithoutKeyOrLogin(t *testing.T) {
	t.Setenv("PATH", cliPath(t, "claude_code", "codex", "gemini_cli"))
	home := t.TempDir()
	for _, c := range []struct{ typ, keyVar, cmd, file string }{
		{"claude_code", "ANTHROPIC_API_KEY", "claude auth login", ".claude/.credentials.json"},
		{"codex", "OPENAI_API_KEY", "codex login", ".codex/auth.json"},
		{"gemini_cli", "GEMINI_API_KEY or GOOGLE_API_KEY", "Login with Google", ".gemini/oauth_creds.json"},
	} {
		a := config.Agent{ID: "a1", Backend: config.Backend{Type: c.typ}}
		getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
		_, _, err := newCLIMember(a, getenv)
		if err == nil {
			t.Fatalf("%s: started without a key or a login", c.typ)
		}
		for _, want := range []string{c.keyVar, c.cmd, filepath.Join(home, c.file), "api_key"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not name %q", c.typ, err, want)
			}
		}
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(home, c.file)), 0o700))
		must(t, os.WriteFile(filepath.Join(home, c.file), []byte(`{"token":"canary-`+c.typ+`-123456"}`), 0o600))
		m, warnings, err := newCLIMember(a, getenv)
		if err != nil {
			t.Fatalf("%s: with a login: %v", c.typ, err)
		}
		// Its limited network does not reach the login's token service.
		if w := strings.Join(warnings, "\n"); !strings.Contains(w, "token service") || !strings.Contains(w, "command_line_allow_network") ||
			strings.Contains(w, "canary") || (c.typ == "gemini_cli") != strings.Contains(w, "oauth2.googleapis.com") {
			t.Errorf("%s: warnings %q", c.typ, w)
		}
		if m.apiKey != "" || len(m.login) != 1 || m.login[0] != c.file || m.userHome != home {
			t.Errorf("%s: key %q, login %v in %s", c.typ, m.apiKey, m.login, m.userHome)
		}
		a.Backend.BaseURL = "http://127.0.0.1:9/v1"
		if m, _, err = newCLIMember(a, getenv); err != nil || len(m.login) != 0 || m.apiKey == "" {
			t.Errorf("%s: a local endpoint: login %v, key %q, %v", c.typ, m.login, m.apiKey, err)
		}
	}
}

// A login file's tokens are registered for redaction, whatever their
// shape; its other fields are not.
func TestLoginSecretsAreRegistered(t *testing.T) {
	registerLoginSecrets([]byte(`{"OPENAI_API_KEY":null,"tokens":{"id_token":"plainIDtoken0001","access_token":"plainACCESS0002",` +
		`"refresh_token":"plainREFRESH0003","account_id":"acct-visible-0004"},"last_refresh":"2026-12-01T00:00:00Z"}`))
	registerLoginSecrets([]byte("not-json-LOGIN-0005\n"))
	for _, s := range []string{"plainIDtoken0001", "plainACCESS0002", "plainREFRESH0003", "not-json-LOGIN-0005"} {
		if strings.Contains(redact.String("said "+s+" here"), s) {
			t.Errorf("%s is not masked", s)
		}
	}
	if !strings.Contains(redact.String("acct-visible-0004"), "acct-visible-0004") {
		t.Error("a field that is no secret is masked")
	}
}
