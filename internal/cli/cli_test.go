package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type result struct {
	code           int
	stdout, stderr string
	dir            string
}

// massgen runs the CLI in-process in a fresh working directory, with only
// the given environment variables set.
func massgen(t *testing.T, ctx context.Context, files map[string]string, vars map[string]string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "HOME" {
			return dir // no user config or ~/.massgen/.env leaks in
		}
		return vars[k]
	}
	code := Run(ctx, args, Env{Getenv: getenv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, WorkDir: dir})
	return result{code: code, stdout: out.String(), stderr: errb.String(), dir: dir}
}

func (r result) logDir(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.dir, ".massgen", "massgen_logs", "log_*"))
	if len(dirs) != 1 {
		t.Fatalf("want one log dir, got %v", dirs)
	}
	return dirs[0]
}

func TestThreeAgentSimExamplePrintsTheAnswerAndWritesTheLogs(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--config", "@examples/sim_three_agents", "What is the capital of France?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	// The demo reads like a run (issue 22): the winner's answer on the
	// question, quoted as written, then the presentation's note; no
	// placeholder words, no progress lines.
	if !strings.HasPrefix(r.stdout, "Final answer — the researcher's draft, which the team voted for:\n\n"+
		`Draft 1 from the researcher on "What is the capital of France?": state the fact itself first`) || strings.Contains(r.stdout, `\"`) ||
		strings.Contains(r.stdout, "voted for researcher") {
		t.Errorf("stdout must hold the final answer alone, got:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "[sim model") || strings.Contains(r.stderr, "answered agent1.1 (shown as") {
		t.Errorf("placeholder text or a relabelled answer line in the demo:\n%s", r.stderr)
	}
	for _, want := range []string{"critic voted for researcher (agent1.1, shown as agent1): agent1 answers the question directly"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress on stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{"simulated", "answered agent", "voted for", "winner:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress on stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	dir := r.logDir(t)
	for _, pattern := range []string{
		"agent_researcher/*/answer.txt", "agent_researcher/*/context.txt", "agent_critic/*/vote.json",
		"agent_outputs/*.txt", "final/researcher/answer.txt", "coordination_events.json",
		"coordination_table.txt", "vote.json", "status.json", "execution_metadata.yaml", "massgen.log",
	} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) == 0 {
			t.Errorf("log layout lacks %s", pattern)
		}
	}
	var status struct {
		Meta    struct{ Status string }
		Results struct{ Winner string }
	}
	data, _ := os.ReadFile(filepath.Join(dir, "status.json"))
	if err := json.Unmarshal(data, &status); err != nil || status.Meta.Status != "completed" || status.Results.Winner != "researcher" {
		t.Errorf("status.json = %s (%v)", data, err)
	}
}

func TestAutomationPrintsOnlyStableKeyValueLines(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--automation", "--config", "@examples/sim_single_agent", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	keys := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		k, _, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("not a KEY: value line: %q", line)
		}
		keys[k] = true
	}
	for _, k := range []string{"LOG_DIR", "STATUS", "WINNER", "ANSWER_FILE", "DURATION", "COMPLETED"} {
		if !keys[k] {
			t.Errorf("automation output lacks %s:\n%s", k, r.stdout)
		}
	}
	if keys["FALLBACK"] { // a single agent's answer is final by design, not as a fallback
		t.Errorf("FALLBACK for a run whose answer is no fallback:\n%s", r.stdout)
	}
}

func TestOutputFileGetsTheFinalAnswer(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--output-file", "out.txt", "--config", "@examples/sim_single_agent", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "out.txt"))
	if err != nil || strings.TrimSpace(string(data)) != strings.TrimSpace(r.stdout) {
		t.Errorf("output file %q (%v) differs from stdout %q", data, err, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".massgen")); err == nil {
		t.Error("--no-logs wrote a log directory")
	}
}

const hangScenario = `
defaults:
  always: {fault: hang}
models: {}
`

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		vars   map[string]string
		args   []string
		code   int
		stderr string // substring of the one-line error
	}{
		{name: "malformed YAML is a config error with file:line", files: map[string]string{"bad.yaml": "agents:\n  - id: a\n    backend: {type: sim\n"},
			args: []string{"--config", "bad.yaml", "q"}, code: 1, stderr: "bad.yaml:"},
		{name: "missing config file", args: []string{"--config", "nope.yaml", "q"}, code: 1, stderr: "config file not found: nope.yaml"},
		{name: "unknown backend suggests the right one", files: map[string]string{"c.yaml": "agent:\n  id: a\n  backend: {type: opena, model: gpt-4o}\n"},
			args: []string{"--config", "c.yaml", "q"}, code: 1, stderr: "did you mean 'openai'"},
		{name: "missing API key names the variable", files: map[string]string{"c.yaml": "agent:\n  id: a\n  backend: {type: groq, model: llama-3.3-70b-versatile}\n"},
			args: []string{"--config", "c.yaml", "q"}, code: 1, stderr: "set GROQ_API_KEY"},
		{name: "unreachable base URL fails the agents with exit 2", files: map[string]string{"c.yaml": "agent:\n  id: a\n  backend: {type: chatcompletion, model: m, base_url: \"http://127.0.0.1:1/v1\"}\n"},
			args: []string{"--config", "c.yaml", "q"}, code: 2, stderr: "cannot reach"},
		{name: "all agents failing exits 2 with the providers' errors", files: map[string]string{
			"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: m1, scenario: s.yaml}}\n  - {id: b, backend: {type: sim, model: m2, scenario: s.yaml}}\n",
			"s.yaml": "models:\n  m1: {always: {fault: \"401\"}}\n  m2: {always: {fault: \"403\"}}\n"},
			args: []string{"--config", "c.yaml", "q"}, code: 2, stderr: "401"},
		{name: "timeout without an answer exits 3", files: map[string]string{
			"c.yaml": "agent: {id: a, backend: {type: sim, scenario: s.yaml}}\n", "s.yaml": hangScenario},
			args: []string{"--orchestrator-timeout", "0.3", "--config", "c.yaml", "q"}, code: 3, stderr: "timed out"},
		{name: "no question with --automation is a usage error", args: []string{"--automation", "--config", "@examples/sim_single_agent"}, code: 1, stderr: "no question"},
		{name: "no config and no key says what to set", args: []string{"q"}, code: 1, stderr: "OPENAI_API_KEY"},
		{name: "unknown flag", args: []string{"--bogus", "q"}, code: 1, stderr: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := massgen(t, t.Context(), tt.files, tt.vars, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s", r.code, tt.code, tt.stderr, r.stderr)
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace on stderr:\n%s", r.stderr)
			}
		})
	}
}

func TestInterruptExits4AndKeepsTheLogs(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(500*time.Millisecond, cancel)
	r := massgen(t, ctx, map[string]string{"c.yaml": "agent: {id: a, backend: {type: sim, scenario: s.yaml}}\n", "s.yaml": hangScenario},
		nil, "--config", "c.yaml", "q")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4: %s", r.code, r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(r.logDir(t), "status.json"))
	if !strings.Contains(string(data), `"interrupted"`) {
		t.Errorf("status.json does not say interrupted: %s", data)
	}
	// The user is told how to go on (issue 22), in words, not the Go
	// error of a cancelled context.
	if !strings.Contains(r.stderr, "interrupted (massgen --continue finishes it") || strings.Contains(r.stderr, "context canceled") {
		t.Errorf("stderr does not say --continue resumes, or shows a Go error:\n%s", r.stderr)
	}
}

func TestConfigValidate(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{"c.yaml": "agents:\n  - id: a\n    backend: {type: opena, model: x}\n"}, nil, "config", "validate", "--json", "c.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	var out struct {
		Valid       bool
		Diagnostics []struct {
			Line       int
			Suggestion string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Valid || len(out.Diagnostics) == 0 || out.Diagnostics[0].Line != 3 {
		t.Fatalf("validate --json = %s (%v)", r.stdout, err)
	}
	ok := massgen(t, t.Context(), nil, nil, "config", "validate", "@examples/sim_three_agents")
	if ok.code != 0 || !strings.Contains(ok.stdout, "valid") {
		t.Fatalf("example config invalid: %d %s %s", ok.code, ok.stdout, ok.stderr)
	}
}

func TestQuickModeWithSimModel(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--backend", "sim", "--model", "sim-quick", "q")
	if r.code != 0 || !strings.Contains(r.stdout, "sim-quick") {
		t.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
}
