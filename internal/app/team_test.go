package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/config"
)

func TestBuiltinToolFlagsReachTheProviderAdapters(t *testing.T) {
	tests := []struct {
		backend string
		want    map[string]any
	}{
		{"{type: openai, model: m, enable_web_search: true, enable_code_interpreter: true}", map[string]any{"enable_web_search": true, "enable_code_interpreter": true}},
		{"{type: grok, model: m, enable_web_search: true}", map[string]any{"search_parameters": map[string]any{"mode": "auto"}}},
		{"{type: groq, model: m, enable_web_search: true, temperature: 0.2}", map[string]any{"temperature": 0.2}},
	}
	for _, tt := range tests {
		cfg, err := config.Parse([]byte("agent: {id: a, backend: "+tt.backend+"}\n"), "c.yaml", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, providerParams(cfg.Agents[0].Backend)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.backend, diff)
		}
	}
}


func TestAzureEndpointBecomesItsV1Base(t *testing.T) {
	tests := map[string]string{
		"https://res.openai.azure.com":            "https://res.openai.azure.com/openai/v1",
		"https://res.openai.azure.com/":           "https://res.openai.azure.com/openai/v1",
		"https://res.openai.azure.com/openai/v1/": "https://res.openai.azure.com/openai/v1",
		"http://127.0.0.1:8089/v1":                "http://127.0.0.1:8089/v1",
		"":                                        "",
	}
	for in, want := range tests {
		if got := azureBase(in); got != want {
			t.Errorf("azureBase(%q) = %q, want %q", in, got, want)
		}
	}
}


func TestModelWithProviderPrefixSelectsTheProviderAndDropsThePrefix(t *testing.T) {
	cfg, err := quickConfig(&Request{Model: "openrouter/openai/gpt-4o-mini"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.Agents[0].Backend; b.Type != "openrouter" || b.Model != "openai/gpt-4o-mini" {
		t.Errorf("backend = %s / %s, want openrouter / openai/gpt-4o-mini", b.Type, b.Model)
	}
}

