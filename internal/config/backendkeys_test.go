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
      seed: null
`
	cfg := parseOK(t, src, nil)
	if len(cfg.Warnings) != 0 {
		t.Errorf("unexpected warnings:%s", dump(cfg.Warnings))
	}
	p := cfg.Agents[0].Backend.Params
	for _, k := range []string{"temperature", "top_p", "max_tokens", "reasoning", "text", "extra_body"} {
		if _, ok := p[k]; !ok {
			t.Errorf("%s not passed through: %v", k, p)
		}
	}
	if _, ok := p["seed"]; ok {
		t.Errorf("a null parameter is sent: %v", p)
	}
}

// A key massgen does not know is never sent to a provider, whatever the
// backend type: upstream passes such keys through, and a real provider
// refuses the request. Each one is warned about at its line and listed by
// IgnoredFeatures; the keys of upstream features massgen does not drive
// (websocket_mode, Claude tool search…) name the feature.
func TestUnknownBackendKeysAreNeverSent(t *testing.T) {
	unknown := []string{"permissions: {default: read}", "prompt_cache_ttl: 24h", "group_config: {max_round: 3}"}
	features := map[string]string{
		"websocket_mode: true":           "WebSocket",
		"enable_tool_search: true":       "Claude tool search",
		"tool_search_variant: bm25":      "Claude tool search",
		"enable_strict_tool_use: true":   "Claude strict tool use",
		"enable_programmatic_flow: true": "Claude programmatic tool calling",
		"max_concurrent_tools: 8":        "tool concurrency",
		"enable_nlip: true":              "NLIP",
	}
	for _, typ := range []string{"openai", "claude", "gemini", "chatcompletion", "grok", "vllm"} {
		t.Run(typ, func(t *testing.T) {
			src := "agents:\n  - id: a\n    backend:\n      type: " + typ + "\n      model: m\n      base_url: http://localhost:1/v1\n"
			var lines []string
			for _, l := range unknown {
				lines = append(lines, l)
			}
			for l := range features {
				lines = append(lines, l)
			}
			for _, l := range lines {
				src += "      " + l + "\n"
			}
			cfg := parseOK(t, src, nil)
			if p := cfg.Agents[0].Backend.Params; len(p) != 0 {
				t.Errorf("unknown keys reach the provider: Params = %v", p)
			}
			for i, l := range lines {
				name, _, _ := strings.Cut(l, ":")
				w, ok := find(cfg.Warnings, "agents[0].backend."+name, Warning)
				if !ok || w.Line != 7+i {
					t.Errorf("%s: warning %s (found %v), want one at line %d", name, w, ok, 7+i)
					continue
				}
				if f := features[l]; f != "" && !strings.Contains(w.Message, f) {
					t.Errorf("%s: warning %q does not name the feature %q", name, w.Message, f)
				}
				if !strings.Contains(w.Message, "ignored") && !strings.Contains(w.Message, "not sent") {
					t.Errorf("%s: warning %q does not say it is not acted on", name, w.Message)
				}
				if !slices.Contains(cfg.IgnoredFeatures(), name+" (agent a)") {
					t.Errorf("%s not in IgnoredFeatures %q", name, cfg.IgnoredFeatures())
				}
			}
		})
	}

	// Under extra_body the same parameter is the user's explicit choice:
	// sent, without a warning.
	quiet := parseOK(t, "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      extra_body: {prompt_cache_ttl: 24h}\n", nil)
	if len(quiet.Warnings) != 0 || quiet.Agents[0].Backend.Params["extra_body"] == nil {
		t.Errorf("extra_body: params %v, warnings:%s", quiet.Agents[0].Backend.Params, dump(quiet.Warnings))
	}
}

// Provider parameters are an allowlist per wire API: a parameter of
// another API is not sent, and the warning names this API's word for it.
func TestParamsOfAnotherAPIAreNotSent(t *testing.T) {
	tests := []struct {
		typ, line, sugg string
	}{
		{"openai", "stop: END", "extra_body"},
		{"openai", "reasoning_effort: high", "reasoning: {effort"},
		{"openai", "verbosity: low", "text: {verbosity"},
		{"claude", "stop: [END]", "stop_sequences"},
		{"claude", "max_output_tokens: 100", "max_tokens"},
		{"claude", "reasoning: {effort: high}", "extra_body"},
		{"chatcompletion", "stop_sequences: [END]", "stop"},
		{"chatcompletion", "text: {verbosity: low}", "extra_body"},
		{"gemini", "safety_settings: []", "extra_body"},
		{"gemini", "thinking: {type: enabled}", "thinking_config"},
		{"gemini", "reasoning_effort: low", "thinking_level"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.line, func(t *testing.T) {
			src := "agents:\n  - id: a\n    backend:\n      type: " + tc.typ + "\n      model: m\n      " + tc.line + "\n"
			cfg := parseOK(t, src, nil)
			name, _, _ := strings.Cut(tc.line, ":")
			if _, sent := cfg.Agents[0].Backend.Params[name]; sent {
				t.Errorf("%s is sent to %s", name, tc.typ)
			}
			w, ok := find(cfg.Warnings, "agents[0].backend."+name, Warning)
			if !ok || w.Line != 6 || !strings.Contains(w.Message, "not sent") || !strings.Contains(w.Suggestion, tc.sugg) {
				t.Errorf("warning = %s (found %v), want 'not sent' at line 6 and a suggestion with %q", w, ok, tc.sugg)
			}
		})
	}
	// and each API's own parameters go through silently
	for typ, line := range map[string]string{
		"openai": "max_output_tokens: 100", "claude": "stop_sequences: [END]", "chatcompletion": "stop: END",
		"vllm": "chat_template_kwargs: {enable_thinking: false}", "gemini": "thinking_config: {thinking_budget: 0}",
		"zai": "thinking: {type: enabled}", "grok": "search_parameters: {mode: auto}",
	} {
		cfg := parseOK(t, "agents:\n  - id: a\n    backend:\n      type: "+typ+"\n      model: m\n      base_url: http://localhost:1/v1\n      "+line+"\n", nil)
		name, _, _ := strings.Cut(line, ":")
		if _, sent := cfg.Agents[0].Backend.Params[name]; !sent || len(cfg.Warnings) != 0 {
			t.Errorf("%s %s: params %v, warnings:%s", typ, line, cfg.Agents[0].Backend.Params, dump(cfg.Warnings))
		}
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
