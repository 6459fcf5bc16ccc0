package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Keys that must never be written anywhere: one of OpenAI's shape, one of
// Anthropic's, and one from the config with no known shape at all (only
// its registration as a resolved key can mask it).
const (
	canaryOpenAI    = "sk-test-LEAKCANARY0123456789abcdef"
	canaryAnthropic = "sk-ant-LEAKCANARY-anthropic-0123456789"
	canaryConfig    = "LEAKCANARYplain42config"
)

// echoingProvider is an API that refuses every key with a 401 whose body
// repeats the credentials it was sent, as some gateways and misconfigured
// proxies do: OpenAI's shape on /v1/responses and /v1/chat/completions,
// Anthropic's on /v1/messages.
func echoingProvider(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		auth := r.Header.Get("Authorization")
		bare := strings.TrimPrefix(auth, "Bearer ")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			key := r.Header.Get("X-Api-Key")
			fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s (header X-Api-Key: %s)"}}`, key, key)
			return
		}
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You sent Authorization: %s","type":"invalid_request_error","code":"invalid_api_key"}}`,
			bare, auth)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func leakConfig(url string) string {
	return fmt.Sprintf(`agents:
  - {id: gpt, backend: {type: openai, model: gpt-4o-mini, base_url: "%[1]s/v1"}}
  - {id: opus, backend: {type: claude, model: claude-sonnet-4-5, base_url: "%[1]s"}}
  - {id: compat, backend: {type: chatcompletion, model: m, base_url: "%[1]s/v1", api_key: %[2]s}}
`, url, canaryConfig)
}

var leakVars = map[string]string{"OPENAI_API_KEY": canaryOpenAI, "ANTHROPIC_API_KEY": canaryAnthropic}

// assertNoCanary fails when text holds any part of a canary key that
// identifies it.
func assertNoCanary(t *testing.T, where, text string) {
	t.Helper()
	if strings.Contains(text, "LEAKCANARY") {
		i := strings.Index(text, "LEAKCANARY")
		t.Errorf("%s holds a key: …%s…", where, text[max(0, i-80):min(len(text), i+80)])
	}
}

// A provider that echoes the key in its 401 body puts it in none of what a
// run writes (stderr, stdout, massgen.log, status.json, the events, the
// replay log, the sessions database), and the error still says which
// agent, provider and status failed.
func TestAKeyEchoedByAProviderIsWrittenNowhere(t *testing.T) {
	url := echoingProvider(t)
	r := massgen(t, t.Context(), map[string]string{"c.yaml": leakConfig(url)}, leakVars, "--config", "c.yaml", "Say hi")
	if r.code == 0 {
		t.Fatalf("exit 0 against a provider that refuses every key:\n%s", r.stderr)
	}
	assertNoCanary(t, "stderr", r.stderr)
	assertNoCanary(t, "stdout", r.stdout)
	for _, want := range []string{"gpt", "opus", "compat", "openai", "claude", "chatcompletion", "HTTP 401", "[redacted]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	files := 0
	err := filepath.WalkDir(r.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Base(path) == "c.yaml" {
			return nil // the user's own config holds its key, of course
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		assertNoCanary(t, path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	logDir := r.logDir(t)
	for _, name := range []string{"massgen.log", "status.json"} {
		b, err := os.ReadFile(filepath.Join(logDir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !strings.Contains(string(b), "HTTP 401") {
			t.Errorf("%s does not name the failure:\n%s", name, b)
		}
	}
	// The sessions database holds the turn's error, masked. (SQLite keeps
	// text as it is, so the walk above read it; its WAL too.)
	db, _ := filepath.Glob(filepath.Join(r.dir, ".massgen", "sessions.db*"))
	var dbText strings.Builder
	for _, f := range db {
		b, _ := os.ReadFile(f)
		dbText.Write(b)
	}
	if !strings.Contains(dbText.String(), "HTTP 401") || !strings.Contains(dbText.String(), "[redacted]") {
		t.Errorf("the sessions database (%v) does not hold the masked error", db)
	}
	t.Logf("%d files checked; stderr:\n%s", files, r.stderr)
}

// massgen serve's error body to an API client does not carry the key a
// provider echoed either.
func TestServeDoesNotForwardAKeyEchoedByAProvider(t *testing.T) {
	url := echoingProvider(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(leakConfig(url)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeIn(t, dir, leakVars, "--config", filepath.Join(dir, "c.yaml"))
	for _, body := range []string{
		`{"model":"massgen","messages":[{"role":"user","content":"Say hi"}]}`,
		`{"model":"massgen","stream":true,"messages":[{"role":"user","content":"Say hi"}]}`,
	} {
		code, resp := p.post(t, "", body)
		assertNoCanary(t, "response", resp)
		if code == 200 && !strings.Contains(body, "stream") || !strings.Contains(resp, "401") {
			t.Errorf("%d %s", code, resp)
		}
	}
	p.stop()
	assertNoCanary(t, "serve stderr", p.stderr.String())
}
