package app

import (
	"github.com/massgen/massgen/internal/agent/cli"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/provider"
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
		_, params, _, err := buildModel(cfg.Agents[0], func(string) string { return "key" }, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, params); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.backend, diff)
		}
	}
}

func TestModelWithProviderPrefixSelectsTheProviderAndDropsThePrefix(t *testing.T) {
	cfg, err := quickConfig(&Request{Team: Team{Model: "openrouter/openai/gpt-4o-mini"}}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.Agents[0].Backend; b.Type != "openrouter" || b.Model != "openai/gpt-4o-mini" {
		t.Errorf("backend = %s / %s, want openrouter / openai/gpt-4o-mini", b.Type, b.Model)
	}
}

// Every backend type the catalogue says this build runs has a registered
// provider, and every registered provider is in the catalogue.
func TestEveryNativeBackendTypeIsRegistered(t *testing.T) {
	for _, typ := range provider.Names() {
		spec, _ := provider.Lookup(typ)
		_, ok := llm.LookupProvider(typ)
		if spec.Wire == provider.WireCLI {
			_, ok = cli.Lookup(typ) // a coding-agent CLI's vendor (internal/agent/cli)
		}
		if ok != spec.Native {
			t.Errorf("%s: registered %v, native %v", typ, ok, spec.Native)
		}
	}
	for _, typ := range llm.Registered() {
		if _, ok := provider.Lookup(typ); !ok {
			t.Errorf("%s is registered but not in the provider catalogue", typ)
		}
	}
}
