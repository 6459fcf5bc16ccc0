package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"A": "1", "B_2": "two", "EMPTY": ""})
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${A}", "1", nil},
		{"x${A}y${B_2}z", "x1ytwoz", nil},
		{"${NOPE}", "", []string{"NOPE"}},
		{"${NOPE:-fallback}", "fallback", nil},
		{"${A:-fallback}", "1", nil},
		{"${EMPTY:-used}", "used", nil},           // as in the shell, :- covers empty too
		{"${NOPE:-}", "", nil},                    // explicit empty default is not "missing"
		{"${cwd}/out", "${cwd}/out", nil},         // left for the workspace layer
		{"${cwd:-/tmp}", "/tmp", nil},             // with a default it is an ordinary variable
		{"cost $5 and ${", "cost $5 and ${", nil}, // not references
		{"${not valid}", "${not valid}", nil},
		{"${1A}", "${1A}", nil},
		{"${A", "${A", nil},
		{"${A}${NOPE}${X}", "1", []string{"NOPE", "X"}},
	}
	for _, tc := range tests {
		got, missing := expand(tc.in, env)
		if got != tc.want || !cmp.Equal(missing, tc.missing) {
			t.Errorf("expand(%q) = %q, %v; want %q, %v", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDotEnv(t *testing.T) {
	dir := t.TempDir()
	first := writeFile(t, dir, "first.env", `# keys for tests
OPENAI_API_KEY=sk-first
export GEMINI_API_KEY = "gem \"quoted\"\tkey"
SINGLE='literal ${X} \n'
BARE=value # trailing comment
HASH=abc#def
EMPTY=
MULTI="line one
line two"
`)
	second := writeFile(t, dir, "second.env", "OPENAI_API_KEY=sk-second\nXAI_API_KEY=xai\nnot a line\n")
	vars, err := LoadDotEnv(first, filepath.Join(dir, "absent.env"), second)
	want := map[string]string{
		"OPENAI_API_KEY": "sk-first", // the first file wins
		"GEMINI_API_KEY": "gem \"quoted\"\tkey",
		"SINGLE":         `literal ${X} \n`,
		"BARE":           "value",
		"HASH":           "abc#def",
		"EMPTY":          "",
		"MULTI":          "line one\nline two",
		"XAI_API_KEY":    "xai",
	}
	if diff := cmp.Diff(want, vars); diff != "" {
		t.Errorf("vars (-want +got):\n%s", diff)
	}
	// A malformed line is skipped and reported with its place; missing
	// files are not errors.
	if err == nil || !strings.Contains(err.Error(), "second.env:3: malformed line") || strings.Contains(err.Error(), "absent") {
		t.Errorf("err = %v", err)
	}

	if vars, err := LoadDotEnv(); err != nil || len(vars) != 0 {
		t.Errorf("no files: %v, %v", vars, err)
	}
	if _, err := LoadDotEnv(dir); err == nil {
		t.Error("a directory should be reported as unreadable")
	}
}

func TestGetenvRealEnvironmentWins(t *testing.T) {
	files := map[string]string{"OPENAI_API_KEY": "from-file", "ONLY_FILE": "file"}
	real := envOf(map[string]string{"OPENAI_API_KEY": "from-env"})
	get := Getenv(files, real)
	if got := get("OPENAI_API_KEY"); got != "from-env" {
		t.Errorf("OPENAI_API_KEY = %q, want the real environment's value", got)
	}
	if got := get("ONLY_FILE"); got != "file" {
		t.Errorf("ONLY_FILE = %q", got)
	}
	if got := get("NOWHERE"); got != "" {
		t.Errorf("NOWHERE = %q", got)
	}
}

// The pieces together, as the CLI will use them: .env values feed ${VAR}.
func TestDotEnvFeedsExpansion(t *testing.T) {
	dir := t.TempDir()
	envFile := writeFile(t, dir, ".env", "MY_MODEL=gpt-4o-mini\n")
	vars, err := LoadDotEnv(envFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte("agent:\n  backend: {type: openai, model: \"${MY_MODEL}\"}\n"), "x.yaml", Getenv(vars, envOf(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Agents[0].Backend.Model; got != "gpt-4o-mini" {
		t.Errorf("model = %q", got)
	}
}
