package provider

import "testing"

// Every alias names a priced model of the catalogue whose backend the
// model's name tells, and the aliases users type most are there.
func TestAliasesNameCatalogueModels(t *testing.T) {
	getenv := func(string) string { return "" }
	for alias, model := range Aliases() {
		if _, priced, err := LookupModel(model, getenv); err != nil || !priced {
			t.Errorf("%s → %s: not a priced catalogue model (%v)", alias, model, err)
		}
		if InferType(model) == "" {
			t.Errorf("%s → %s: no backend is inferred from the name", alias, model)
		}
	}
	for alias, typ := range map[string]string{"sonnet": "claude", "opus": "claude", "haiku": "claude", "gpt": "openai",
		"gemini": "gemini", "grok": "grok", "SONNET": "claude", " flash ": "gemini"} {
		m, ok := ResolveAlias(alias)
		if !ok || InferType(m) != typ {
			t.Errorf("ResolveAlias(%q) = %q, %v; want a %s model", alias, m, ok, typ)
		}
	}
	if m, ok := ResolveAlias("gpt-4o-mini"); ok {
		t.Errorf("a model name is not an alias: %q", m)
	}
}
