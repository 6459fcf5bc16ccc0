package config

import (
	"strings"
	"testing"
)

func TestUnimplementedUpstreamFeaturesWarnWithTheirLocation(t *testing.T) {
	cfg, err := Parse([]byte(`agents:
  - id: a
    backend:
      type: groq
      model: llama-3.3-70b-versatile
      enable_web_search: true
      enable_code_interpreter: false
      cwd: workspace1
orchestrator:
  snapshot_storage: snapshots
  coordination:
    enable_planning_mode: true
`), "c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{ // key → line
		"agents[0].backend.enable_web_search":            6,
		"agents[0].backend.cwd":                          8,
		"orchestrator.snapshot_storage":                  10,
		"orchestrator.coordination.enable_planning_mode": 12,
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
