package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPersonaGeneratorDecodesAndWarnsOfUnknownValues(t *testing.T) {
	on := parseOK(t, `agents:
  - {id: a, backend: {type: openai, model: gpt-4o}}
orchestrator:
  coordination:
    persona_generator:
      enabled: true
      diversity_mode: methodology
      after_first_answer: soften
      persona_guidelines: Think of the reader.
`, nil)
	if g := on.Orchestrator.Personas; g == nil || *g != (PersonaGenerator{DiversityMode: "methodology", AfterFirstAnswer: "soften", Guidelines: "Think of the reader."}) {
		t.Errorf("Personas = %+v", g)
	}
	if len(on.Warnings) != 0 || strings.Contains(strings.Join(on.IgnoredFeatures(), ","), "persona") {
		t.Errorf("warnings %s, ignored %q", dump(on.Warnings), on.IgnoredFeatures())
	}

	off := parseOK(t, `agents:
  - {id: a, backend: {type: openai, model: gpt-4o}}
orchestrator:
  coordination:
    persona_generator: {enabled: false, diversity_mode: perspective}
`, nil)
	if off.Orchestrator.Personas != nil {
		t.Errorf("enabled: false gives %+v", off.Orchestrator.Personas)
	}

	odd := parseOK(t, `agents:
  - {id: a, backend: {type: openai, model: gpt-4o}}
orchestrator:
  coordination:
    persona_generator: {enabled: true, diversity_mode: perspectve, after_first_answer: forget, persist_across_turns: true}
`, nil)
	if g := odd.Orchestrator.Personas; g == nil || g.DiversityMode != "perspective" || g.AfterFirstAnswer != "drop" {
		t.Errorf("unknown values do not fall back to the defaults: %+v", g)
	}
	got := dump(odd.Warnings)
	for _, want := range []string{"'perspectve' is not one of perspective, implementation, methodology: perspective is used",
		"did you mean 'perspective'?", "'forget' is not one of drop, soften, keep: drop is used", "persist_across_turns"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:%s", want, got)
		}
	}
}

// The upstream configs that turn persona generation on load with it on,
// and nothing calls it ignored.
func TestUpstreamPersonaConfigsTurnItOn(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "reference", "massgen-configs-v0.1.73")
	if _, err := os.Stat(root); err != nil {
		t.Skip("the v0.1.73 reference configs are not here: ", err)
	}
	n := 0
	for _, rel := range []string{"basic/multi/persona_diversity_example.yaml", "analysis/log_analysis.yaml", "analysis/log_analysis_cli.yaml"} {
		path := filepath.Join(root, rel)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		cfg, err := Load(path, func(string) string { return "x" })
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		n++
		if cfg.Orchestrator.Personas == nil {
			t.Errorf("%s: persona generation is off", rel)
		}
		for _, f := range cfg.IgnoredFeatures() {
			if strings.Contains(f, "persona") {
				t.Errorf("%s: %q is listed as ignored", rel, f)
			}
		}
	}
	if n == 0 {
		t.Fatal("none of the persona configs found")
	}
}
