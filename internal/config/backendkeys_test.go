package config

import (
	"slices"
	"strings"
	"testing"
)

// A near-miss of a known backend key is a typo: it draws a did-you-mean
// warning at its line and is never sent to the provider, where it would be
// rejected (or worse, silently ignored) far from the config that caused it.
func TestBackendKeyTypoIsWarnedAndNotSentToTheProvider(t *testing.T) {
	src := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      typ: openai\n      temprature: 0.2\n"
	cfg := parseOK(t, src, nil)
	for key, want := range map[string]struct {
		line int
		sugg string
	}{
		"agents[0].backend.typ":        {6, "did you mean 'type'?"},
		"agents[0].backend.temprature": {7, "did you mean 'temperature'?"},
	} {
		w, ok := find(cfg.Warnings, key, Warning)
		if !ok {
			t.Errorf("no warning for %s:%s", key, dump(cfg.Warnings))
			continue
		}
		if w.Line != want.line || w.Suggestion != want.sugg {
			t.Errorf("%s: got %s, want line %d and %q", key, w, want.line, want.sugg)
		}
	}
	if p := cfg.Agents[0].Backend.Params; len(p) != 0 {
		t.Errorf("typos reach the provider: Params = %v", p)
	}
	if got := cfg.IgnoredFeatures(); !slices.Contains(got, "typ (agent a)") || !slices.Contains(got, "temprature (agent a)") {
		t.Errorf("IgnoredFeatures = %q, want the typos listed", got)
	}
}

// A provider parameter massgen knows must have the type the provider
// expects: a wrong type is an error at its line, with the fix.
func TestKnownProviderParamWithWrongTypeIsAnError(t *testing.T) {
	tests := []struct {
		name, line, wantMsg, wantSugg string
	}{
		{"word for a number", `temperature: "hot"`, `must be a number, got string "hot"`, "e.g. temperature: 0.7"},
		{"quoted number", `temperature: "0.7"`, "must be a number", "remove the quotes: 0.7"},
		{"word for a whole number", `max_tokens: "lots"`, `must be a whole number, got string "lots"`, "e.g. max_tokens: 4096"},
		{"fraction for a whole number", `max_tokens: 10.5`, "must be a whole number", "e.g. max_tokens: 4096"},
		{"scalar for a map", `reasoning: high`, "must be a map", "e.g. reasoning: {effort: medium}"},
		{"number for a boolean", `parallel_tool_calls: 1`, "must be a boolean", ""},
		{"map for a stop list", `stop: {a: 1}`, "must be a string or a list of strings", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      " + tc.line + "\n"
			ds := diagnose(t, src, nil)
			key := "agents[0].backend." + strings.SplitN(tc.line, ":", 2)[0]
			d, ok := find(ds, key, Error)
			if !ok {
				t.Fatalf("no error for %s:%s", key, dump(ds))
			}
			if d.Line != 6 || !strings.Contains(d.Message, tc.wantMsg) || d.Suggestion != tc.wantSugg {
				t.Errorf("got %s\nwant line 6, message containing %q, suggestion %q", d, tc.wantMsg, tc.wantSugg)
			}
			if n := len(ds.Errors()); n != 1 {
				t.Errorf("%d errors, want 1:%s", n, dump(ds))
			}
		})
	}
}

// The parameters upstream configs use pass through silently, typed or not.
func TestKnownProviderParamsPassThroughSilently(t *testing.T) {
	src := `agents:
  - id: a
    backend:
      type: openai
      model: gpt-5
      temperature: 0.7
      top_p: 1
      max_tokens: 4096
      reasoning: {effort: medium, summary: auto}
      text: {verbosity: low}
      extra_body: {anything: [1, 2]}
      stop: END
      seed: null
`
	cfg := parseOK(t, src, nil)
	if len(cfg.Warnings) != 0 {
		t.Errorf("unexpected warnings:%s", dump(cfg.Warnings))
	}
	p := cfg.Agents[0].Backend.Params
	for _, k := range []string{"temperature", "top_p", "max_tokens", "reasoning", "text", "extra_body", "stop"} {
		if _, ok := p[k]; !ok {
			t.Errorf("%s not passed through: %v", k, p)
		}
	}
	if _, ok := p["seed"]; ok {
		t.Errorf("a null parameter is sent: %v", p)
	}
}

// A key that is neither known nor near one is a provider parameter massgen
// has not heard of. It is sent as upstream sends it, but not silently: the
// warning says so and names the way to send it without a warning.
func TestUnknownProviderParamIsSentWithAWarning(t *testing.T) {
	src := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      prompt_cache_retention: 24h\n"
	cfg := parseOK(t, src, nil)
	w, ok := find(cfg.Warnings, "agents[0].backend.prompt_cache_retention", Warning)
	if !ok || w.Line != 6 || !strings.Contains(w.Message, "sent to the provider as is") || !strings.Contains(w.Suggestion, "extra_body") {
		t.Errorf("warning = %s (found %v)", w, ok)
	}
	if cfg.Agents[0].Backend.Params["prompt_cache_retention"] != "24h" {
		t.Errorf("not passed through: %v", cfg.Agents[0].Backend.Params)
	}
	if got := cfg.IgnoredFeatures(); len(got) != 0 {
		t.Errorf("a parameter that is sent is not ignored: %q", got)
	}

	// Under extra_body the same parameter is the user's explicit choice.
	quiet := parseOK(t, "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      extra_body: {prompt_cache_retention: 24h}\n", nil)
	if len(quiet.Warnings) != 0 {
		t.Errorf("extra_body draws warnings:%s", dump(quiet.Warnings))
	}

	// The Gemini adapter reads only the parameters it knows; an unknown one
	// is not sent, so the warning must not claim it is.
	gem := parseOK(t, "agents:\n  - id: a\n    backend:\n      type: gemini\n      model: gemini-2.5-flash\n      prompt_cache_retention: 24h\n", nil)
	w, ok = find(gem.Warnings, "agents[0].backend.prompt_cache_retention", Warning)
	if !ok || !strings.Contains(w.Message, "ignored") || !strings.Contains(w.Suggestion, "extra_body") {
		t.Errorf("gemini warning = %s (found %v)", w, ok)
	}
	if !slices.Contains(gem.IgnoredFeatures(), "prompt_cache_retention (agent a)") {
		t.Errorf("IgnoredFeatures = %q", gem.IgnoredFeatures())
	}
}

// api_key: ${VAR} with VAR unset must not fall back to another key behind
// the user's back: validation names the variable, and the backend carries
// it so that a run can refuse.
func TestAPIKeyFromUnsetVariableIsWarnedAndRecorded(t *testing.T) {
	src := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      api_key: ${MY_TEAM_KEY}\n"
	cfg := parseOK(t, src, map[string]string{"OPENAI_API_KEY": "sk-other"})
	w, ok := find(cfg.Warnings, "agents[0].backend.api_key", Warning)
	if !ok || w.Line != 6 || !strings.Contains(w.Message, "MY_TEAM_KEY") {
		t.Errorf("warning = %s (found %v):%s", w, ok, dump(cfg.Warnings))
	}
	if got := cfg.Agents[0].Backend.APIKeyUnsetVar; got != "MY_TEAM_KEY" {
		t.Errorf("APIKeyUnsetVar = %q, want MY_TEAM_KEY", got)
	}

	set := parseOK(t, src, map[string]string{"MY_TEAM_KEY": "sk-team"})
	if b := set.Agents[0].Backend; b.APIKey != "sk-team" || b.APIKeyUnsetVar != "" || len(set.Warnings) != 0 {
		t.Errorf("set variable: %+v%s", b, dump(set.Warnings))
	}
	def := parseOK(t, "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      api_key: ${MY_TEAM_KEY:-}\n", nil)
	if b := def.Agents[0].Backend; b.APIKeyUnsetVar != "" || len(def.Warnings) != 0 {
		t.Errorf("a default says the fallback is wanted: %+v%s", b, dump(def.Warnings))
	}
}
