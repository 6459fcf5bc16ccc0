package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

func TestTeamMixingOpenAIClaudeAndGeminiReachesConsensus(t *testing.T) {
	srv, url := simtest.Start(t, "")
	root := strings.TrimSuffix(url, "/v1")
	cfg := fmt.Sprintf(`agents:
  - id: gpt
    backend: {type: openai, model: gpt-4o-mini, base_url: "%[1]s", api_key: k}
  - id: claude
    backend: {type: claude, model: claude-sonnet-4-5, base_url: "%[2]s", api_key: k}
  - id: gemini
    backend: {type: gemini, model: gemini-2.5-flash, base_url: "%[2]s", api_key: k}
`, url, root)
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--no-logs", "--config", "c.yaml", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	wires := map[string]string{}
	for _, rec := range srv.Requests() {
		wires[rec.Model] = rec.Wire
	}
	want := map[string]string{"gpt-4o-mini": llmsim.WireResponses, "claude-sonnet-4-5": llmsim.WireAnthropic, "gemini-2.5-flash": llmsim.WireGemini}
	for model, wire := range want {
		if wires[model] != wire {
			t.Errorf("%s spoke %q, want %q", model, wires[model], wire)
		}
	}
	if !strings.Contains(r.stderr, "winner:") {
		t.Errorf("no consensus in the progress output:\n%s", r.stderr)
	}
}

func TestRateLimitedRequestWaitsForRetryAfterAndSucceeds(t *testing.T) {
	srv, url := simtest.Start(t, `
models:
  m:
    steps:
      - {fault: "429", retry_after: 0.2}
`)
	cfg := fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: %q}}\n", url)
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--no-logs", "--config", "c.yaml", "q")
	if r.code != 0 || strings.Contains(r.stderr, "turn failed") {
		t.Fatalf("exit %d, want success after one retry:\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if reqs[0].Step != "fault:429" || reqs[1].Outcome != llmsim.OutcomeCompleted {
		t.Fatalf("want a 429 then a completed retry, got %+v / %+v", reqs[0], reqs[1])
	}
	if gap := reqs[1].Start.Sub(reqs[0].End); gap < 200e6 {
		t.Errorf("retried after %s, before the 0.2 s retry-after", gap)
	}
}

func TestUnauthorizedAgentFailsAloneAndTheOthersFinish(t *testing.T) {
	_, url := simtest.Start(t, `
models:
  bad: {always: {fault: "401"}}
`)
	cfg := fmt.Sprintf(`agents:
  - {id: good, backend: {type: chatcompletion, model: good, base_url: %[1]q}}
  - {id: bad, backend: {type: chatcompletion, model: bad, base_url: %[1]q}}
`, url)
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--no-logs", "--config", "c.yaml", "q")
	if r.code != 0 || !strings.Contains(r.stderr, "bad") || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "left the run") {
		t.Fatalf("exit %d; want success with bad's 401 reported:\n%s", r.code, r.stderr)
	}
}

func TestAzureWithoutEndpointSaysWhichVariableToSet(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{"c.yaml": "agent: {id: a, backend: {type: azure_openai, model: my-deployment}}\n"},
		map[string]string{"AZURE_OPENAI_API_KEY": "k"}, "--config", "c.yaml", "q")
	if r.code != 1 || !strings.Contains(r.stderr, "AZURE_OPENAI_ENDPOINT") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

func TestWithoutConfigTheProjectConfigIsUsed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".massgen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".massgen", "config.yaml"), []byte("agent: {id: local, backend: {type: sim, model: sim-local}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code := Run(t.Context(), []string{"--no-logs", "q"}, Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb, WorkDir: dir})
	if code != 0 || !strings.Contains(out.String(), "sim-local") {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out.String(), errb.String())
	}
}

func TestWithoutConfigATeamIsBuiltFromTheKeysInDotEnv(t *testing.T) {
	srv, url := simtest.Start(t, "")
	r := massgen(t, t.Context(), map[string]string{".env": "OPENAI_API_KEY=sk-test\nGROQ_API_KEY=gsk-test\n"},
		map[string]string{"MASSGEN_OPENAI_BASE_URL": url, "MASSGEN_GROQ_BASE_URL": url}, "--no-logs", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	models := map[string]bool{}
	for _, rec := range srv.Requests() {
		models[rec.Model] = true
	}
	if !models["gpt-4o-mini"] || !models["llama-3.3-70b-versatile"] || len(models) != 2 {
		t.Errorf("team models = %v, want the OpenAI and Groq defaults", models)
	}
}

func TestProtocolExampleScriptsItsAgentsInline(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--config", "@examples/sim_protocol", "How should a team pick a database?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"architect answered agent1.2", "skeptic: action rejected: You did not call a workflow tool", "winner:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
}
