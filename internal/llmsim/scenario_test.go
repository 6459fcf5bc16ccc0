package llmsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docExample is the scenario shown in the package documentation; the test
// keeps the documentation honest.
const docExample = `
defaults:
  ttft_ms: 50              # time to first token
  tokens_per_second: 200   # 0 or absent: as fast as possible
models:
  gpt-a:
    steps:
      - answer: "Paris is the capital of France."
      - fault: "429"         # any HTTP status 400-599
        retry_after: 1.5     # seconds: retry-after header
      - vote: agent1
        reason: "agent1 is right"
    final: "Paris."          # the presentation, when no step applies
  gpt-b:
    answer: "[{model}] take {n}"   # default-policy answer text template
    steps:
      - fault: cut                 # stream dies half-way, no [DONE]
      - text: "thinking aloud"     # no tool call at all
      - when: presentation         # waits for a request without tools
        text: "B presents."
      - calls:                      # several tool calls in one response
          - {name: vote, arguments: '{"agent_id":"agent1","reason":"x"}'}
          - {name: new_answer, arguments: '{"content":"y"}'}
  broken:
    always: {fault: "401"}   # every request, never consumed
`

func TestParseDocExample(t *testing.T) {
	sc, err := ParseScenario([]byte(docExample))
	if err != nil {
		t.Fatal(err)
	}
	if *sc.Defaults.TTFTMillis != 50 || *sc.Defaults.TokensPerSecond != 200 {
		t.Errorf("defaults = %+v", sc.Defaults)
	}
	a := sc.Models["gpt-a"]
	want := []Step{
		{Answer: "Paris is the capital of France."},
		{Fault: "429", RetryAfter: 1.5},
		{Vote: "agent1", Reason: "agent1 is right"},
	}
	if diff := cmp.Diff(want, a.Steps); diff != "" {
		t.Errorf("gpt-a steps (-want +got):\n%s", diff)
	}
	b := sc.Models["gpt-b"]
	if len(b.Steps) != 4 || b.Steps[2].When != WhenPresentation || len(b.Steps[3].Calls) != 2 ||
		b.Steps[3].Calls[0].Arguments != `{"agent_id":"agent1","reason":"x"}` {
		t.Errorf("gpt-b = %+v", b)
	}
	if br := sc.Models["broken"]; br.Always == nil || br.Always.Fault != "401" {
		t.Errorf("broken = %+v", br)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "models: {}\n"} {
		if _, err := ParseScenario([]byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestScenarioErrorsHaveLines(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"syntax", "models:\n  m:\n    steps: [\n", "scenario:3:"},
		{"unknown field", "models:\n  m:\n    steps:\n      - answer: x\n        tft_ms: 3\n", "scenario:5:"},
		{"wrong type", "defaults:\n  ttft_ms: soon\n", "scenario:2:"},
		{"unknown fault", "models:\n  m:\n    steps:\n      - answer: x\n      - fault: \"42\"\n", `scenario:5:16: models.m.steps[1].fault: unknown fault "42"`},
		{"two actions", "models:\n  m:\n    steps:\n      - answer: x\n        vote: agent1\n", "scenario:5:15: models.m.steps[0].vote: a step takes one action, got answer and vote"},
		{"bad when", "models:\n  m:\n    always:\n      when: later\n", `scenario:4:13: models.m.always.when: unknown value "later"`},
		{"negative ttft", "defaults:\n  ttft_ms: -5\n", "scenario:2:12: defaults.ttft_ms: must not be negative"},
		{"model with slash", "models:\n  openai/gpt-4o:\n    steps:\n      - {fault: nope}\n", `scenario:4:17: models.openai/gpt-4o.steps[0].fault: unknown fault "nope"`},
		{"call without name", "models:\n  m:\n    steps:\n      - calls:\n          - arguments: '{}'\n", "scenario:5:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestLoadScenario(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(docExample), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadScenario(good); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("models:\n  m:\n    steps:\n      - fault: explode\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadScenario(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":4:16: ") {
		t.Errorf("error = %v", err)
	}
	if _, err := LoadScenario(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestScriptMerging(t *testing.T) {
	sc := scenario(t, `
defaults:
  ttft_ms: 10
  tokens_per_second: 5
  final: "default final"
  steps: [{answer: d}]
models:
  "*":
    ttft_ms: 20
    answer: "star {n}"
  exact:
    tokens_per_second: 50
    steps: [{answer: e}]
`)
	exact := sc.scriptFor("exact")
	if exact.ttftMillis != 20 || exact.tps != 50 || exact.final != "default final" || exact.answer != "star {n}" || exact.steps[0].Answer != "e" {
		t.Errorf("exact = %+v", exact)
	}
	other := sc.scriptFor("other")
	if other.ttftMillis != 20 || other.tps != 5 || other.steps[0].Answer != "d" {
		t.Errorf("other = %+v", other)
	}
	if s := (*Scenario)(nil).scriptFor("x"); s.steps != nil || s.ttftMillis != 0 {
		t.Errorf("nil scenario = %+v", s)
	}
}

func TestWhen(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - when: presentation
        text: "Presented."
      - answer: "second step"
`))
	ctx := testCtx(t)
	// A coordination request skips the presentation step; it stays queued.
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if calls := r.message().ToolCalls; len(calls) != 1 || !strings.Contains(calls[0].Function.Arguments, "[sim model m] Answer 1") {
		t.Fatalf("coordination request got %+v", calls)
	}
	r = runStream(t, ctx, f, params("m", "present"))
	if r.err != nil || r.message().Content != "Presented." {
		t.Fatalf("presentation got %q, %v", r.message().Content, r.err)
	}
	r = runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	if calls := r.message().ToolCalls; len(calls) != 1 || calls[0].Function.Arguments != `{"content":"second step"}` {
		t.Fatalf("third request got %+v", calls)
	}
}

func TestConcurrentStepsConsumedOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n  m:\n    steps:\n")
	const n = 40
	for i := range n {
		b.WriteString("      - answer: \"step " + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "\"\n")
	}
	f := start(t, scenario(t, b.String()))
	ctx := testCtx(t)
	got := make(chan string, n)
	for range n {
		go func() {
			res, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool()))
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- res.Choices[0].Message.ToolCalls[0].Function.Arguments
		}()
	}
	seen := map[string]bool{}
	for range n {
		a := <-got
		if seen[a] || !strings.HasPrefix(a, `{"content":"step `) {
			t.Errorf("duplicate or bad answer %s", a)
		}
		seen[a] = true
	}
	for _, rec := range f.sim.Requests() {
		if rec.Step != "answer" || rec.Outcome != OutcomeCompleted {
			t.Errorf("record %+v", rec)
		}
	}
}
