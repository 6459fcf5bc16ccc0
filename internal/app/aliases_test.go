package app

import (
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
)

// `--model sonnet` (and opus, haiku, gpt, gemini, grok, …) runs the
// catalogue's current model of that family, on the backend its name
// tells; --backend naming another provider keeps the name as typed.
func TestModelAliases(t *testing.T) {
	getenv := func(string) string { return "" }
	for alias, want := range map[string][2]string{
		"sonnet": {"claude", "claude-sonnet-4-5"}, "opus": {"claude", "claude-opus-4-1"}, "haiku": {"claude", "claude-haiku-4-5"},
		"gpt": {"openai", "gpt-5"}, "gemini": {"gemini", "gemini-2.5-pro"}, "grok": {"grok", "grok-4"}, "Sonnet": {"claude", "claude-sonnet-4-5"},
	} {
		cfg, err := quickConfig(&Request{Team: Team{Model: alias}}, getenv)
		if err != nil {
			t.Fatalf("--model %s: %v", alias, err)
		}
		if b := cfg.Agents[0].Backend; b.Type != want[0] || b.Model != want[1] {
			t.Errorf("--model %s = %s / %s, want %s / %s", alias, b.Type, b.Model, want[0], want[1])
		}
	}
	cfg, err := quickConfig(&Request{Team: Team{Model: "sonnet", Backend: "openrouter"}}, getenv)
	if err != nil || cfg.Agents[0].Backend.Model != "sonnet" {
		t.Errorf("--backend openrouter --model sonnet = %+v, %v; want the name as typed", cfg, err)
	}
	agents, err := ModelAgents([]string{"opus", "gpt"}, getenv)
	if err != nil || len(agents) != 2 || agents[0].ID != "opus" || agents[0].Backend.Model != "claude-opus-4-1" || agents[1].Backend.Model != "gpt-5" {
		t.Errorf("--models opus,gpt = %+v, %v", agents, err)
	}

	// The model the provider is asked for is the alias's.
	srv := llmsim.New(nil)
	vars := simGateway(t, srv)
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: t.TempDir()}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{Model: "sonnet"}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
	if err != nil || out.Status != "completed" {
		t.Fatalf("--model sonnet on the simulator: %v %+v", err, out)
	}
	for _, r := range srv.Requests() {
		if r.Model != "claude-sonnet-4-5" || r.Wire != llmsim.WireAnthropic {
			t.Errorf("request for %q on %s, want claude-sonnet-4-5 on Anthropic's wire", r.Model, r.Wire)
		}
	}
}
