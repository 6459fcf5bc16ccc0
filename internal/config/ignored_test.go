package config

import (
	"slices"
	"strings"
	"testing"
)

// Upstream keys whose features this version does not implement load, warn
// at their line, and are listed by IgnoredFeatures, so a run can say that it
// did not do everything its config asked.
func TestIgnoredUpstreamFeaturesWarnAndAreListed(t *testing.T) {
	tests := []struct {
		src, key, feature string
	}{
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, hooks: {PreToolUse: []}}\n", "agents[0].backend.hooks", "hooks (agent gpt)"},
		{"hooks: {PostToolUse: [{matcher: '*'}]}\n" + oneAgent, "hooks", "hooks"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, enable_image_generation: true}\n", "agents[0].backend.enable_image_generation", "enable_image_generation (agent gpt)"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, enable_audio_generation: true}\n", "agents[0].backend.enable_audio_generation", "enable_audio_generation (agent gpt)"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, enable_video_generation: true}\n", "agents[0].backend.enable_video_generation", "enable_video_generation (agent gpt)"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, enable_multimodal_tools: true}\n", "agents[0].backend.enable_multimodal_tools", "enable_multimodal_tools (agent gpt)"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, vote_only: true}\n", "agents[0].backend.vote_only", "vote_only (agent gpt)"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, use_two_tier_workspace: true}\n", "agents[0].backend.use_two_tier_workspace", "use_two_tier_workspace (agent gpt)"},
		{oneAgent + "orchestrator: {coordination: {use_two_tier_workspace: true}}\n", "orchestrator.coordination.use_two_tier_workspace", "use_two_tier_workspace"},
		{"agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-4o, enable_rate_limit: true}\n", "agents[0].backend.enable_rate_limit", "enable_rate_limit (agent gpt)"},
	}
	for _, tc := range tests {
		t.Run(tc.feature, func(t *testing.T) {
			cfg := parseOK(t, tc.src, nil)
			w, ok := find(cfg.Warnings, tc.key, Warning)
			if !ok {
				t.Fatalf("no warning for %s:%s", tc.key, dump(cfg.Warnings))
			}
			if w.Line == 0 || !strings.Contains(w.Message, "ignored") {
				t.Errorf("warning = %s", w)
			}
			if got := cfg.IgnoredFeatures(); !slices.Contains(got, tc.feature) {
				t.Errorf("IgnoredFeatures = %q, want %q in it", got, tc.feature)
			}
		})
	}
}

// A switch that is off asks for nothing, so nothing is ignored.
func TestFeaturesSwitchedOffAreNotIgnored(t *testing.T) {
	src := `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      enable_image_generation: false
      vote_only: false
      hooks: null
      mcp_servers: []
orchestrator:
  coordination: {enable_memory_filesystem_mode: false}
ui: {display_type: textual}
`
	cfg := parseOK(t, src, nil)
	if len(cfg.Warnings) != 0 || len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("warnings:%s\nignored: %q", dump(cfg.Warnings), cfg.IgnoredFeatures())
	}
}

// Every key the tables accept is either acted on or has an ignored-feature
// entry: that is what makes "every key is known, warned about, or an error"
// true by construction rather than by review.
func TestEveryAcceptedKeyIsClassified(t *testing.T) {
	levels := map[string][]string{
		"top level":        topLevelKeys,
		"agent":            agentKeys,
		"orchestrator":     orchestratorKeys,
		"coordination":     coordinationKeys,
		"timeout_settings": timeoutSettingsKeys,
		"ui":               uiKeys,
		"backend (owned)":  backendOwnedKeys,
	}
	for level, keys := range levels {
		for _, k := range keys {
			if _, ignored := ignoredFeature(k); ignored == slices.Contains(implementedKeys, k) {
				t.Errorf("%s key %q: implemented=%v ignored=%v; it must be exactly one", level, k, !ignored, ignored)
			}
		}
	}
	for _, fam := range []string{"command_line_docker_future_setting", "enable_file_generation"} {
		if _, ok := ignoredFeature(fam); !ok {
			t.Errorf("family member %q is not classified", fam)
		}
	}
}

// Unknown enum values are errors that list the valid values and suggest the
// nearest one; none of them silently means the default.
func TestUnknownEnumValuesAreErrors(t *testing.T) {
	tests := []struct {
		src, key, sugg string
	}{
		{oneAgent + "orchestrator: {answer_novelty_requirement: strct}\n", "orchestrator.answer_novelty_requirement", "did you mean 'strict'? (valid values: lenient, balanced, strict)"},
		{oneAgent + "orchestrator: {answer_novelty_requirement: medium}\n", "orchestrator.answer_novelty_requirement", "valid values: lenient, balanced, strict"},
		{oneAgent + "orchestrator: {voting_sensitivity: Strict}\n", "orchestrator.voting_sensitivity", "did you mean 'strict'? (valid values: lenient, balanced, strict, roi, "},
		{oneAgent + "orchestrator: {restart_policy: injct}\n", "orchestrator.restart_policy", "did you mean 'inject'? (valid values: restart, inject)"},
		{oneAgent + "ui: {display_type: simpel}\n", "ui.display_type", "did you mean 'simple'?"},
		{oneAgent + "orchestrator: {context_paths: [{path: /tmp, permission: rw}]}\n", "orchestrator.context_paths[0].permission", "valid values: read, write"},
		{"agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, command_line_execution_mode: dokcer}\n", "agents[0].backend.command_line_execution_mode", "did you mean 'docker'? (valid values: local, docker)"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			ds := diagnose(t, tc.src, nil)
			d, ok := find(ds, tc.key, Error)
			if !ok {
				t.Fatalf("no error for %s:%s", tc.key, dump(ds))
			}
			if d.Line == 0 || !strings.HasPrefix(d.Suggestion, tc.sugg) {
				t.Errorf("got %s, want suggestion starting %q", d, tc.sugg)
			}
		})
	}
}

func TestUnimplementedUpstreamFeaturesWarnWithTheirLocation(t *testing.T) {
	cfg, err := Parse([]byte(`agents:
  - id: a
    backend:
      type: groq
      model: llama-3.3-70b-versatile
      enable_web_search: true
      enable_code_interpreter: false
      use_two_tier_workspace: true
orchestrator:
  debug_final_answer: true
  coordination:
    use_two_tier_workspace: true
`), "c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{ // key → line
		"agents[0].backend.enable_web_search":              6,
		"agents[0].backend.use_two_tier_workspace":         8,
		"orchestrator.debug_final_answer":                  10,
		"orchestrator.coordination.use_two_tier_workspace": 12,
	}
	for _, w := range cfg.Warnings {
		if !strings.Contains(w.Message, "accepted but ignored") {
			continue
		}
		line, ok := want[w.Key]
		if !ok {
			t.Errorf("unexpected warning %s", w)
			continue
		}
		if w.Line != line || w.File != "c.yaml" {
			t.Errorf("%s at %s:%d, want line %d", w.Key, w.File, w.Line, line)
		}
		delete(want, w.Key)
	}
	for k := range want {
		t.Errorf("no warning for %s", k)
	}
}

func TestBuiltinToolFlagsDoNotWarnWhereTheProviderHasThem(t *testing.T) {
	cfg, err := Parse([]byte("agent:\n  backend: {type: openai, model: gpt-4o, enable_web_search: true, enable_code_interpreter: true}\n"),
		"c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.Warnings {
		t.Errorf("unexpected warning: %s", w)
	}
	if cfg.Agents[0].Backend.Extra["enable_web_search"] != true {
		t.Errorf("flag not kept: %+v", cfg.Agents[0].Backend.Extra)
	}
}
