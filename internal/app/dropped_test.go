package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// statusIgnored reads status.json's meta.ignored_features of a run.
func statusIgnored(t *testing.T, logDir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logDir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Meta struct {
			IgnoredFeatures []string `json:"ignored_features"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Meta.IgnoredFeatures
}

// runReporting runs cfg on the simulator with logs and checks that the
// run completed and that its report — the outcome's IgnoredFeatures (the
// WARNINGS line) and status.json's meta.ignored_features — names every
// feature of want, after the config's own ignored keys.
func runReporting(t *testing.T, cfg string, want ...string) *Outcome {
	t.Helper()
	dir := t.TempDir()
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(cfg)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(dir, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if out.Status != "completed" {
		t.Fatalf("status %s, err %v\n%s", out.Status, out.Err, stderr.String())
	}
	status := statusIgnored(t, out.LogDir)
	for _, f := range want {
		if !slices.Contains(out.IgnoredFeatures, f) {
			t.Errorf("IgnoredFeatures = %q, want %q among them", out.IgnoredFeatures, f)
		}
		if !slices.Contains(status, f) {
			t.Errorf("status.json meta.ignored_features = %q, want %q among them", status, f)
		}
	}
	if !slices.Equal(out.IgnoredFeatures, status) {
		t.Errorf("the outcome (%q) and status.json (%q) disagree", out.IgnoredFeatures, status)
	}
	return out
}

// Issue 19: custom tools that cannot load — a Python file that is not
// there, a command that is not there — are offered as tools that answer
// with why, and the run's report names each of them, after the config's
// own ignored keys.
func TestCustomToolsThatCannotLoadAreInTheRunsReport(t *testing.T) {
	out := runReporting(t, `hooks: {PreToolUse: [{matcher: "*"}]}
agents:
  - id: a
    backend:
      type: sim
      custom_tools:
        - {name: gone, path: not/here.py, function: two_num_tool}
        - {name: nocmd, type: command, command: ["./not-here.sh"]}
  - id: b
    backend: {type: sim}
`, "custom_tools.gone (agent a)", "custom_tools.nocmd (agent a)")
	if out.IgnoredFeatures[0] != "hooks" {
		t.Errorf("the config's ignored keys come first: %q", out.IgnoredFeatures)
	}
	if slices.ContainsFunc(out.IgnoredFeatures, func(f string) bool { return strings.Contains(f, "agent b") }) {
		t.Errorf("agent b went without nothing: %q", out.IgnoredFeatures)
	}
}

// A Python tool whose file is there but whose function is not fails to
// load in the runner: the report names it, and only it.
func TestAPythonToolThatFailsToLoadIsInTheRunsReport(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "tools.py"), []byte("def add(a: int, b: int) -> int:\n    return a + b\n"), 0o644))
	out := runReporting(t, `agents:
  - id: a
    backend:
      type: sim
      custom_tools:
        - {name: add, path: `+filepath.Join(dir, "tools.py")+`, function: add}
        - {name: missing, path: `+filepath.Join(dir, "tools.py")+`, function: no_such_function}
`, "custom_tools.missing (agent a)")
	if slices.Contains(out.IgnoredFeatures, "custom_tools.add (agent a)") {
		t.Errorf("a tool that loaded is reported as left out: %q", out.IgnoredFeatures)
	}
}

// Docker mode with no Docker engine: the agent's execute_command answers
// every call with why, and the run's report says the agent went without
// docker mode.
func TestDockerWithoutAnEngineIsInTheRunsReport(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	runReporting(t, `agents:
  - id: a
    backend:
      type: sim
      cwd: workspace
      enable_mcp_command_line: true
      command_line_execution_mode: docker
`, "command_line_execution_mode: docker (agent a)")
}
