package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/config"
)

// runIn runs the CLI in dir (also HOME) with stdin and only vars set.
func runIn(t *testing.T, dir, stdin string, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "HOME" {
			return dir
		}
		return vars[k]
	}
	code := Run(t.Context(), args, Env{Getenv: getenv, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, WorkDir: dir})
	return result{code: code, stdout: out.String(), stderr: errb.String(), dir: dir}
}

// modelsServer accepts the key "sk-good" on GET /models and refuses others.
func modelsServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func userEnv(dir string) string { return filepath.Join(dir, ".config", "massgen", ".env") }

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSetupKeyIsCheckedAndSavedWithMode0600(t *testing.T) {
	srv := modelsServer(t)
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "setup", "--key", "OPENAI_API_KEY=sk-good", "--check-base-url", srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "OPENAI_API_KEY: valid") || strings.Contains(r.stdout+r.stderr, "sk-good") {
		t.Fatalf("output:\n%s%s", r.stdout, r.stderr)
	}
	if got := readFile(t, userEnv(dir)); got != "OPENAI_API_KEY=sk-good\n" {
		t.Fatalf(".env:\n%s", got)
	}
	if m := fileMode(t, userEnv(dir)); m != 0o600 {
		t.Fatalf("mode %o", m)
	}
	// massgen reads the file it wrote: quickstart now offers OpenAI first.
	r = runIn(t, dir, "", nil, "quickstart", "--yes", "--agents", "1", "--no-run")
	if r.code != 0 || strings.Contains(r.stdout, "is not set") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if cfg := loadConfig(t, filepath.Join(dir, ".massgen", "config.yaml")); cfg.Agents[0].Backend.Type != "openai" {
		t.Fatalf("agent %+v", cfg.Agents[0].Backend)
	}
}

func TestSetupRefusedKeyIsNotSaved(t *testing.T) {
	srv := modelsServer(t)
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "setup", "--key", "OPENAI_API_KEY=sk-wrong-secret", "--check-base-url", srv.URL)
	if r.code != 1 || !strings.Contains(r.stdout, "401") || !strings.Contains(r.stderr, "--no-check") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "sk-wrong-secret") {
		t.Fatal("the key was printed")
	}
	if _, err := os.Stat(userEnv(dir)); !os.IsNotExist(err) {
		t.Fatalf("a .env was written: %v", err)
	}
}

func TestSetupOfflineSavesWithANote(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "setup", "--key", "GROQ_API_KEY=gsk-1", "--check-base-url", url)
	if r.code != 0 || !strings.Contains(r.stdout, "not reachable") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, userEnv(dir)); got != "GROQ_API_KEY=gsk-1\n" {
		t.Fatalf(".env:\n%s", got)
	}
}

func TestSetupFromStdinLocalKeepsTheOtherLines(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, ".env")
	if err := os.WriteFile(local, []byte("KEEP=me\nANTHROPIC_API_KEY=old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := "# pasted\nANTHROPIC_API_KEY=sk-ant-new\n\nexport GEMINI_API_KEY='g 1'\n"
	r := runIn(t, dir, stdin, nil, "setup", "--local", "--from-stdin", "--no-check")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "sk-ant-new") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := readFile(t, local), "KEEP=me\nANTHROPIC_API_KEY=sk-ant-new\nGEMINI_API_KEY='g 1'\n"; got != want {
		t.Fatalf(".env:\n%s\nwant:\n%s", got, want)
	}
	if m := fileMode(t, local); m != 0o600 {
		t.Fatalf("mode %o", m)
	}
	if _, err := os.Stat(userEnv(dir)); !os.IsNotExist(err) {
		t.Fatal("--local also wrote ~/.config/massgen/.env")
	}
	// A malformed line stops before anything is written.
	r = runIn(t, dir, "KEEP=other\nsk-pasted-alone\n", nil, "setup", "--local", "--from-stdin", "--no-check")
	if r.code != 1 || !strings.Contains(r.stderr, "stdin line 2") || strings.Contains(r.stderr, "sk-pasted-alone") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(readFile(t, local), "KEEP=me\n") {
		t.Fatal("the file changed after an error")
	}
}

func TestQuickstartSimTeamRunsAfterWritingTheConfig(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "quickstart", "--yes", "--backend", "sim", "What is the capital of France?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	path := filepath.Join(dir, ".massgen", "config.yaml")
	cfg := loadConfig(t, path)
	if len(cfg.Agents) != 3 || cfg.Agents[2].Backend.Model != "sim-gamma" {
		t.Fatalf("agents %+v", cfg.Agents)
	}
	if !strings.Contains(r.stdout, "Wrote "+path) || !strings.Contains(r.stdout, "Answer") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	// A second quickstart does not overwrite it silently.
	r = runIn(t, dir, "", nil, "quickstart", "--yes", "--backend", "sim", "--agents", "2", "--no-run")
	if r.code != 1 || !strings.Contains(r.stderr, "--force") || len(loadConfig(t, path).Agents) != 3 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = runIn(t, dir, "", nil, "--quickstart", "--yes", "--backend", "sim", "--agents", "2", "--no-run", "--force")
	if r.code != 0 || len(loadConfig(t, path).Agents) != 2 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestQuickstartModelsAndReasoningEffort(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "quickstart", "--yes", "--agents", "3", "--model", "gpt-5", "--model", "claude-sonnet-4",
		"--model", "gemini-2.5-pro", "--reasoning-effort", "low", "--output", "team.yaml", "--no-run")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "ANTHROPIC_API_KEY, which is not set") {
		t.Errorf("no note on the missing keys:\n%s", r.stdout)
	}
	cfg := loadConfig(t, filepath.Join(dir, "team.yaml"))
	var got []string
	for _, a := range cfg.Agents {
		got = append(got, a.Backend.Type+"/"+a.Backend.Model)
	}
	if strings.Join(got, " ") != "openai/gpt-5 claude/claude-sonnet-4 gemini/gemini-2.5-pro" {
		t.Fatalf("agents %v", got)
	}
	if r, _ := cfg.Agents[0].Backend.Params["reasoning"].(map[string]any); r["effort"] != "low" {
		t.Errorf("gpt-5 reasoning %v", cfg.Agents[0].Backend.Params)
	}
	if _, ok := cfg.Agents[1].Backend.Params["reasoning"]; ok {
		t.Error("claude got a reasoning effort")
	}
	for _, bad := range [][]string{
		{"--agents", "6", "--backend", "sim"},
		{"--agents", "2", "--model", "a", "--model", "b", "--model", "c"},
		{"--model", "mystery-model"},
		{"--model", "gpt-5", "--reasoning-effort", "extreme"},
		{}, // no key set, no model: nothing to choose
	} {
		r := runIn(t, t.TempDir(), "", nil, append([]string{"quickstart", "--yes", "--no-run"}, bad...)...)
		if r.code != 1 || r.stderr == "" {
			t.Errorf("%v: exit %d\n%s", bad, r.code, r.stderr)
		}
	}
}

func TestInitCodeGivesWorkspacesAndTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "init", "--use-case", "code", "--yes", "--backend", "sim", "--agents", "2", "--no-run")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cfg := loadConfig(t, filepath.Join(dir, ".massgen", "config.yaml"))
	for _, a := range cfg.Agents {
		if a.Backend.Cwd == "" || a.Backend.CommandLine == nil || !strings.Contains(a.SystemMessage, "test") {
			t.Errorf("agent %s: cwd %q command line %v system %q", a.ID, a.Backend.Cwd, a.Backend.CommandLine, a.SystemMessage)
		}
	}
	if r := runIn(t, dir, "", nil, "config", "validate", "--strict", ".massgen/config.yaml"); r.code != 0 {
		t.Fatalf("strict validation: %s%s", r.stdout, r.stderr)
	}
	r = runIn(t, t.TempDir(), "", nil, "--init", "--use-case", "qa", "--yes", "--backend", "sim", "What is 2+2?")
	if r.code != 0 || !strings.Contains(r.stdout, "Answer") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, t.TempDir(), "", nil, "init", "--use-case", "poetry", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "research, code, qa") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func loadConfig(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUpstreamGenerateConfigIsQuickstartWithoutQuestions(t *testing.T) {
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "--generate-config", "team.yaml", "--config-model", "sim-alpha", "--config-agents=2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cfg := loadConfig(t, filepath.Join(dir, "team.yaml"))
	if len(cfg.Agents) != 2 || cfg.Agents[1].Backend.Type != "sim" || cfg.Agents[1].Backend.Model != "sim-alpha" {
		t.Fatalf("agents %+v", cfg.Agents)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen", "massgen_logs")); !os.IsNotExist(err) {
		t.Fatal("--generate-config ran the team")
	}
}

// The key picker's help and description name the same key (issue 22:
// "Space selects" against huh's "x toggle").
func TestSetupKeyPickerHelpNamesSpace(t *testing.T) {
	h := setupKeyMap().MultiSelect.Toggle.Help()
	if h.Key != "space/x" || !slices.Contains(setupKeyMap().MultiSelect.Toggle.Keys(), "space") {
		t.Errorf("toggle help %q %q, keys %v", h.Key, h.Desc, setupKeyMap().MultiSelect.Toggle.Keys())
	}
}
