package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/provider"
)

func TestWriteDotEnvCreatesTheFileWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "massgen", ".env")
	if err := WriteDotEnv(path, []KeyValue{{"OPENAI_API_KEY", "sk-one"}}); err != nil {
		t.Fatal(err)
	}
	assertMode(t, path, 0o600)
	if got := read(t, path); got != "OPENAI_API_KEY=sk-one\n" {
		t.Fatalf("file:\n%s", got)
	}
}

func TestWriteDotEnvReplacesTheKeyLineAndKeepsTheOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	old := "# my keys\nexport OPENAI_API_KEY=sk-old\nGROQ_API_KEY=gsk-keep # comment\n\nOPENAI_API_KEY=sk-dup\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	kvs := []KeyValue{{"OPENAI_API_KEY", "sk-new"}, {"ANTHROPIC_API_KEY", `with space "and" quote's`}}
	if err := WriteDotEnv(path, kvs); err != nil {
		t.Fatal(err)
	}
	assertMode(t, path, 0o600) // tightened, not kept at 0644
	got := read(t, path)
	want := "# my keys\nOPENAI_API_KEY=sk-new\nGROQ_API_KEY=gsk-keep # comment\n\n" +
		`ANTHROPIC_API_KEY="with space \"and\" quote's"` + "\n"
	if got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	vars, err := config.LoadDotEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"OPENAI_API_KEY": "sk-new", "GROQ_API_KEY": "gsk-keep", "ANTHROPIC_API_KEY": kvs[1].Value} {
		if vars[k] != v {
			t.Errorf("%s read back as %q, want %q", k, vars[k], v)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".env.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestParseKeyValueNeverRepeatsAValue(t *testing.T) {
	for _, in := range []string{"sk-secret-pasted-alone", "OPENAI_API_KEY=", "1BAD=sk-secret"} {
		_, _, err := ParseKeyValue(in)
		if err == nil {
			t.Fatalf("%q accepted", in)
		}
		if strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("error repeats the value: %v", err)
		}
	}
	k, v, err := ParseKeyValue(`export GEMINI_API_KEY="abc"`)
	if err != nil || k != "GEMINI_API_KEY" || v != "abc" {
		t.Fatalf("got %q %q %v", k, v, err)
	}
}

// keyServer answers the model-list requests of the three API families:
// 200 for the key "good", 401 otherwise.
func keyServer(t *testing.T) (*httptest.Server, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/v1/models":
			key = r.Header.Get("x-api-key")
			if r.Header.Get("anthropic-version") == "" {
				w.WriteHeader(400)
				return
			}
		case "/v1beta/models":
			key = r.Header.Get("x-goog-api-key")
		case "/models":
		default:
			w.WriteHeader(404)
			return
		}
		seen = append(seen, r.Method+" "+r.URL.Path)
		if key != "good" {
			w.WriteHeader(401)
			return
		}
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestCheckKeyAsksEachProviderForItsModelList(t *testing.T) {
	srv, seen := keyServer(t)
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY"} {
		kp, ok := LookupKey(name)
		if !ok {
			t.Fatalf("%s not in the catalogue", name)
		}
		if c := CheckKey(t.Context(), srv.Client(), kp, "good", srv.URL); c.Status != KeyValid {
			t.Errorf("%s good key: %+v", name, c)
		}
		c := CheckKey(t.Context(), srv.Client(), kp, "bad-secret", srv.URL)
		if c.Status != KeyInvalid || !strings.Contains(c.Note, "401") {
			t.Errorf("%s bad key: %+v", name, c)
		}
		if strings.Contains(c.Note, "bad-secret") {
			t.Errorf("the note shows the key: %s", c.Note)
		}
	}
	want := []string{"GET /models", "GET /models", "GET /v1/models", "GET /v1/models", "GET /v1beta/models", "GET /v1beta/models", "GET /models", "GET /models"}
	if strings.Join(*seen, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", *seen, want)
	}
}

func TestCheckKeyOfflineIsSkippedWithANote(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	kp, _ := LookupKey("OPENAI_API_KEY")
	c := CheckKey(t.Context(), nil, kp, "sk-x", "http://"+addr+"/v1")
	if c.Status != KeyOffline || !strings.Contains(c.Note, "not reachable") {
		t.Fatalf("got %+v", c)
	}
}

func TestCheckKeyWithoutAKnownEndpointIsUnchecked(t *testing.T) {
	kp, ok := LookupKey("AZURE_OPENAI_API_KEY")
	if !ok {
		t.Fatal("azure key not in the catalogue")
	}
	if c := CheckKey(t.Context(), nil, kp, "k", ""); c.Status != KeyUnchecked {
		t.Fatalf("got %+v", c)
	}
}

func TestSetupKeysListsEachVariableOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range SetupKeys() {
		if seen[k.Env] {
			t.Errorf("%s listed twice", k.Env)
		}
		seen[k.Env] = true
	}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY"} {
		if !seen[k] {
			t.Errorf("%s missing", k)
		}
	}
	if seen["VLLM_API_KEY"] {
		t.Error("a local server's optional key is offered")
	}
}

func TestConfigYAMLLoadsForEveryUseCase(t *testing.T) {
	agents := []AgentSpec{{Backend: "openai", Model: "gpt-5", Reasoning: "high"}, {Backend: "claude", Model: "claude-sonnet-4"}, {Backend: "sim", Model: "sim-alpha"}}
	for _, uc := range append([]string{""}, UseCaseNames...) {
		data, err := ConfigYAML(agents, uc, "quickstart")
		if err != nil {
			t.Fatalf("%q: %v", uc, err)
		}
		cfg, err := config.Parse(data, "c.yaml", func(string) string { return "" })
		if err != nil {
			t.Fatalf("%q: %v\n%s", uc, err, data)
		}
		if len(cfg.Agents) != 3 || cfg.Agents[0].Backend.Type != "openai" || cfg.Agents[1].Backend.Model != "claude-sonnet-4" {
			t.Fatalf("%q: agents %+v", uc, cfg.Agents)
		}
		r, _ := cfg.Agents[0].Backend.Params["reasoning"].(map[string]any)
		if r["effort"] != "high" {
			t.Errorf("%q: reasoning %v", uc, cfg.Agents[0].Backend.Params)
		}
		code := uc == "code"
		for _, a := range cfg.Agents {
			if (a.Backend.Cwd != "") != code || (a.Backend.CommandLine != nil) != code {
				t.Errorf("%q: agent %s cwd %q command line %v", uc, a.ID, a.Backend.Cwd, a.Backend.CommandLine)
			}
			if (a.SystemMessage != "") != (uc != "") {
				t.Errorf("%q: agent %s system message %q", uc, a.ID, a.SystemMessage)
			}
		}
		if ig := cfg.IgnoredFeatures(); len(ig) > 0 {
			t.Errorf("%q: ignored settings %v", uc, ig)
		}
	}
	if _, err := ConfigYAML(agents, "poetry", "init"); err == nil {
		t.Error("unknown use case accepted")
	}
}

func TestModelChoicesPutProvidersWithKeysFirst(t *testing.T) {
	getenv := func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "x"
		}
		return ""
	}
	cs, err := ModelChoices(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 || cs[0].Backend != "claude" || !cs[0].HasKey {
		t.Fatalf("first choice %+v", cs[0])
	}
	afterKeyed := false
	for _, c := range cs {
		if c.Backend != "claude" {
			afterKeyed = true
		} else if afterKeyed {
			t.Fatalf("a claude model after the others: %v", cs)
		}
		if _, ok := provider.Lookup(c.Backend); !ok {
			t.Errorf("%s: unknown backend %q", c.Model, c.Backend)
		}
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s mode %o, want %o", path, fi.Mode().Perm(), want)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
