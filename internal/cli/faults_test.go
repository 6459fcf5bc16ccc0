package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/orchestrator"
)

// An upstream command word massgen does not have is never run as a
// question: `massgen export` would otherwise send "export" to every agent
// of the team and bill it. (`massgen logs` is a command of its own.)
func TestCommandWordsAreNeverRunAsAQuestion(t *testing.T) {
	srv, url := simtest.Start(t, "")
	cfg := map[string]string{"c.yaml": fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: %q}}\n", url)}
	for _, args := range [][]string{{"export"}, {"shares", "list"}, {"viewer"}, {"Export"}, {"Logs"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := massgen(t, t.Context(), cfg, nil, append([]string{"--config", "c.yaml"}, args...)...)
			if r.code != ExitConfig || !strings.Contains(r.stderr, "massgen -- "+args[0]) || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests for command words, want none", n)
	}
	// After --, the word is a question.
	r := massgen(t, t.Context(), cfg, nil, "--no-logs", "--config", "c.yaml", "--", "logs")
	if r.code != 0 || len(srv.Requests()) == 0 {
		t.Fatalf("massgen -- logs: exit %d, %d requests:\n%s", r.code, len(srv.Requests()), r.stderr)
	}
}

func TestABlankQuestionIsAUsageError(t *testing.T) {
	for _, q := range []string{"", "   ", "\n\t"} {
		r := massgen(t, t.Context(), nil, nil, "--config", "@examples/sim_single_agent", q)
		if r.code != ExitConfig || !strings.Contains(r.stderr, "question is empty") || r.stdout != "" {
			t.Errorf("question %q: exit %d, stdout %q, stderr %s", q, r.code, r.stdout, r.stderr)
		}
	}
}

func TestUpstreamFlagsMapOrSayWhatToUse(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{args: []string{"--list-examples"}, stdout: "sim_three_agents"},
		{args: []string{"--example", "sim_single_agent"}, stdout: "agent"},
		{args: []string{"--example", "nope"}, code: 1, stderr: "no example matches"},
		{args: []string{"--validate", "@examples/sim_three_agents"}, stdout: "valid"},
		{args: []string{"--validate", "bad.yaml", "--json"}, code: 1, stdout: `"valid": false`},
		{args: []string{"--strict"}, code: 1, stderr: "--strict goes with --validate FILE"},
		{args: []string{"--no-display", "--no-logs", "--config", "@examples/sim_single_agent", "q"}, stdout: "Answer"},
		{args: []string{"--continue"}, code: 1, stderr: "cannot resume: no such session: there are no sessions yet"},
		{args: []string{"--session-id", "abc", "q"}, code: 1, stderr: "cannot resume: no such session: abc"},
		{args: []string{"--continue", "--session-id", "abc", "q"}, code: 1, stderr: "give one of them"},
		{args: []string{"--list-sessions"}, stdout: "no sessions yet"},
		{args: []string{"--select"}, code: 1, stderr: "massgen examples"},
		{args: []string{"--init"}, code: 1, stderr: "no terminal to ask on: pass --yes"},
		{args: []string{"--setup"}, code: 1, stderr: "give the keys as --key"},
		{args: []string{"--rate-limit", "q"}, code: 1, stderr: "requests_per_minute"},
		// Later upstream versions' flags (reference §5.2).
		{args: []string{"--web", "q"}, code: 1, stderr: "--web opens the Web UI, where the question is typed"},
		{args: []string{"--web-port", "8000", "q"}, code: 1, stderr: "--web-port goes with --web"},
		{args: []string{"--web-review"}, code: 1, stderr: "massgen --web"},
		{args: []string{"--textual-serve"}, code: 1, stderr: "massgen --web"},
		{args: []string{"--quickstart"}, code: 1, stderr: "no terminal to ask on: pass --yes"},
		{args: []string{"--quickstart-agent", "id=a,backend=openai,model=gpt-5", "q"}, code: 1, stderr: "massgen quickstart --yes"},
		{args: []string{"--config-docker", "q"}, code: 1, stderr: "massgen quickstart --yes"},
		{args: []string{"--generate-config", "c.yaml", "--config-backend", "sim", "--config-agents=2"}, stdout: "Wrote"},
		{args: []string{"--generate-config", "c.yaml", "--config-docker"}, code: 1, stderr: "massgen quickstart --yes"},
		{args: []string{"--cwd-context", "rwx", "q"}, code: 1, stderr: "--cwd-context takes ro or rw"},
		// --display textual is the TUI; without a terminal to press q in, it
		// leaves at the end of the run, and the answer follows on stdout.
		{args: []string{"--display", "textual", "--no-logs", "--config", "@examples/sim_single_agent", "q"}, stdout: "Answer"},
		{args: []string{"--display", "web", "q"}, code: 1, stderr: "use tui, plain or silent"},
		{args: []string{"--automation", "--display", "tui", "q"}, code: 1, stderr: "does not go with --display tui"},
		{args: []string{"--no-display", "--display", "tui", "q"}, code: 1, stderr: "does not go with --display tui"},
		{args: []string{"--no-parse-at-references", "--no-logs", "--config", "@examples/sim_single_agent", "q"}, stdout: "Answer"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := massgen(t, t.Context(), map[string]string{"bad.yaml": "agents:\n  - {id: a, backend: {type: opena, model: x}}\n"}, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout (want %q):\n%s\nstderr (want %q):\n%s", r.code, tt.code, tt.stdout, r.stdout, tt.stderr, r.stderr)
			}
			if strings.Contains(r.stderr, "unknown flag") {
				t.Errorf("a bare unknown-flag error:\n%s", r.stderr)
			}
		})
	}
}

func TestEveryMissingAPIKeyIsNamedAtOnce(t *testing.T) {
	cfg := "agents:\n" +
		"  - {id: a, backend: {type: groq, model: llama-3.3-70b-versatile}}\n" +
		"  - {id: b, backend: {type: claude, model: claude-sonnet-4-5}}\n" +
		"  - {id: c, backend: {type: openai, model: gpt-4o-mini}}\n" +
		"  - {id: d, backend: {type: sim}}\n"
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--config", "c.yaml", "q")
	if r.code != ExitConfig {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"agent a", "GROQ_API_KEY", "agent b", "ANTHROPIC_API_KEY", "agent c", "OPENAI_API_KEY"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestAnUnwritableOutputFileIsFoundBeforeTheRun(t *testing.T) {
	srv, url := simtest.Start(t, "")
	cfg := map[string]string{"c.yaml": fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: %q}}\n", url)}
	r := massgen(t, t.Context(), cfg, nil, "--no-logs", "--output-file", "no/such/dir/out.txt", "--config", "c.yaml", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "--output-file") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests before the --output-file check failed, want none", n)
	}
	// A writable path that did not exist is not left behind by the check
	// when the run then fails to start.
	r = massgen(t, t.Context(), map[string]string{"bad.yaml": "agents: [\n"}, nil, "--output-file", "out.txt", "--config", "bad.yaml", "q")
	if _, err := os.Stat(filepath.Join(r.dir, "out.txt")); err == nil {
		t.Error("the --output-file check left an empty file behind")
	}
}

// When writing the answer fails after all, the answer still reaches stdout.
func TestTheAnswerIsPrintedWhenTheOutputFileCannotBeWritten(t *testing.T) {
	var out, errb strings.Builder
	env := &Env{Stdout: &out, Stderr: &errb, WorkDir: t.TempDir()}
	res := &app.Outcome{Result: &orchestrator.Result{Status: orchestrator.Completed, Final: "forty-two"}}
	err := finish(env, false, filepath.Join(env.WorkDir, "gone", "out.txt"), res)
	if codeOf(err) != ExitExecution || !strings.Contains(err.Error(), "--output-file") {
		t.Errorf("err = %v, want an execution error naming --output-file", err)
	}
	if !strings.Contains(out.String(), "forty-two") {
		t.Errorf("stdout %q lacks the answer", out.String())
	}
}

// A mistyped model is not priced as the model its name starts with.
func TestAMistypedModelIsNotPricedAsAnotherOne(t *testing.T) {
	_, url := simtest.Start(t, "")
	r := massgen(t, t.Context(), nil, map[string]string{"OPENAI_API_KEY": "k", "MASSGEN_OPENAI_BASE_URL": url},
		"--no-logs", "--model", "gpt-4o-mnii", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `"gpt-4o-mnii" is not in the model catalogue — did you mean "gpt-4o-mini"?`) {
		t.Errorf("no warning about the unknown model:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "$0.0000 in") {
		t.Errorf("the unknown model was priced:\n%s", r.stderr)
	}
}

// A model name the catalogue does not know gets the same warning from
// `config validate` as from a run (issue 22): a near name a "did you mean",
// a name far from every model that its cost is not counted.
func TestValidateAndRunWarnOfUnknownModels(t *testing.T) {
	files := map[string]string{"c.yaml": "agents:\n" +
		"  - {id: a, backend: {type: openai, model: gpt-4o-mnii}}\n" +
		"  - {id: b, backend: {type: openai, model: gpt-5-turbo-ultra}}\n" +
		"  - {id: c, backend: {type: openai, model: gpt-4o-mini}}\n" +
		"  - {id: d, backend: {type: ollama, model: my-local-llama}}\n"}
	near := `model "gpt-4o-mnii" is not in the model catalogue — did you mean "gpt-4o-mini"? (its cost is not counted)`
	far := `unknown model "gpt-5-turbo-ultra": not in the model catalogue, so its cost is not counted`
	v := massgen(t, t.Context(), files, nil, "config", "validate", "c.yaml")
	if v.code != 0 || !strings.Contains(v.stdout, near) || !strings.Contains(v.stdout, far) || !strings.Contains(v.stdout, "valid (4 agents, 2 warnings)") {
		t.Errorf("config validate: exit %d:\n%s%s", v.code, v.stdout, v.stderr)
	}
	if strings.Contains(v.stdout, "my-local-llama") {
		t.Errorf("a local server's model is warned about:\n%s", v.stdout)
	}
	_, url := simtest.Start(t, "")
	r := massgen(t, t.Context(), nil, map[string]string{"OPENAI_API_KEY": "k", "MASSGEN_OPENAI_BASE_URL": url},
		"--no-logs", "--model", "gpt-5-turbo-ultra", "q")
	if r.code != 0 || !strings.Contains(r.stderr, far) {
		t.Errorf("run: exit %d, no warning %q:\n%s", r.code, far, r.stderr)
	}
}

// `config validate` and a run give one verdict on a backend type, in the
// same words: ag2 is refused by both; a coding-agent CLI is valid, and a
// run without its program says how to install it.
func TestValidateAndRunAgreeOnBackendTypes(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no claude here
	noInstall := map[string]string{"ANTHROPIC_API_KEY": "k", "XDG_DATA_HOME": t.TempDir()}
	for _, tc := range []struct{ name, backend, validate, run string }{
		{"ag2", "{type: ag2}", "backend type 'ag2' is recognised but not supported by this version yet",
			"backend type 'ag2' is recognised but not supported by this version yet"},
		{"claude_code without a model (upstream allows it)", "{type: claude_code}", "valid", "massgen setup cli claude_code"},
		{"claude_code with a model", "{type: claude_code, model: claude-sonnet-4-5}", "valid", "npm install -g @anthropic-ai/claude-code@2.1.332"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"c.yaml": "agent: {id: a, backend: " + tc.backend + "}\n"}
			v := massgen(t, t.Context(), files, nil, "config", "validate", "c.yaml")
			run := massgen(t, t.Context(), files, noInstall, "--config", "c.yaml", "q")
			if !strings.Contains(v.stdout, tc.validate) || (tc.validate == "valid") != (v.code == 0) {
				t.Errorf("validate: exit %d:\n%s%s", v.code, v.stdout, v.stderr)
			}
			if run.code != ExitConfig || !strings.Contains(run.stderr, tc.run) {
				t.Errorf("run: exit %d:\n%s", run.code, run.stderr)
			}
		})
	}
	// Quick mode reaches the same verdict.
	r := massgen(t, t.Context(), nil, noInstall, "--backend", "claude_code", "--model", "claude-sonnet-4-5", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "claude (the claude_code CLI) is not found") {
		t.Errorf("quick mode: exit %d:\n%s", r.code, r.stderr)
	}
}

// The list an unknown --backend is offered holds only backends a run
// accepts (issue 22): not ag2.
func TestUnknownBackendOffersOnlyRunnableOnes(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--backend", "agg", "--model", "x", "q")
	if r.code == 0 || !strings.Contains(r.stderr, "one of sim, ") || strings.Contains(r.stderr, "ag2") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
}
