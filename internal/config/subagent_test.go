package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var subagentKeys = []string{"enable_subagents", "subagent_default_timeout", "subagent_min_timeout", "subagent_max_timeout",
	"subagent_max_concurrent", "subagent_types", "subagent_orchestrator", "background_subagents"}

// The subagent keys are read, with their children's team, and draw no
// "ignored" warning; bad values are errors at their line.
func TestSubagentKeys(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  coordination:
    enable_subagents: true
    subagent_default_timeout: 200
    subagent_min_timeout: 10
    subagent_max_timeout: 900
    subagent_max_concurrent: 2
    subagent_types: [critic, round_evaluator]
    background_subagents: {enabled: true, injection_strategy: tool_result}
    subagent_orchestrator:
      enabled: true
      max_new_answers: 2
      enable_web_search: true
      agents:
        - backend: {type: sim, model: child}
        - id: second
          backend: {type: openai, model: gpt-4o-mini}
`, nil)
	s := cfg.Orchestrator.Subagents
	if !s.Enabled || s.DefaultTimeout != 200 || s.MinTimeout != 10 || s.MaxTimeout != 900 || s.MaxConcurrent != 2 ||
		!slices.Equal(s.Types, []string{"critic", "round_evaluator"}) {
		t.Fatalf("decoded %+v", s)
	}
	if len(s.Agents) != 2 || s.Agents[0].ID != "subagent_agent_1" || s.Agents[0].Backend.Type != "sim" ||
		s.Agents[1].ID != "second" || s.Agents[1].Backend.Model != "gpt-4o-mini" {
		t.Fatalf("child agents %+v", s.Agents)
	}
	if len(cfg.IgnoredFeatures()) != 0 {
		t.Fatalf("ignored: %v %s", cfg.IgnoredFeatures(), dump(cfg.Warnings))
	}
	for _, bad := range []string{"subagent_max_concurrent: 0", "subagent_default_timeout: -1", "subagent_types: critic",
		"subagent_orchestrator: {agents: [{id: x}]}"} {
		_, err := Parse([]byte(oneAgent+"orchestrator:\n  coordination:\n    "+bad+"\n"), "t.yaml", envOf(nil))
		if err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	typo := parseOK(t, oneAgent+"orchestrator:\n  coordination:\n    subagent_orchestrator: {agentz: []}\n", nil)
	if _, ok := find(typo.Warnings, "orchestrator.coordination.subagent_orchestrator.agentz", Warning); !ok {
		t.Errorf("an unknown key of subagent_orchestrator is warned about:%s", dump(typo.Warnings))
	}
	off := parseOK(t, oneAgent+"orchestrator:\n  coordination:\n    subagent_orchestrator: {enabled: false, agents: [{backend: {type: sim}}]}\n", nil)
	if len(off.Orchestrator.Subagents.Agents) != 0 {
		t.Fatal("a disabled subagent_orchestrator gives no team")
	}
}

// The upstream configs that mention enable_subagents (7 turn it on, one
// off) load with no diagnostic about a subagent key (their child agents'
// backends may have warnings of their own, as any backend).
func TestUpstreamSubagentConfigsNotIgnored(t *testing.T) {
	n := 0
	for _, corpus := range referenceCorpora {
		if _, err := os.Stat(corpus.dir); err != nil {
			t.Skipf("reference configs not found at %s: %v", corpus.dir, err)
		}
		err := filepath.WalkDir(corpus.dir, func(path string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || filepath.Ext(path) != ".yaml" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), "enable_subagents:") {
				return err
			}
			n++
			cfg, diags := parse(data, path, envOf(nil))
			for _, d := range diags {
				if slices.ContainsFunc(subagentKeys, func(k string) bool { return strings.HasSuffix(d.Key, "."+k) }) ||
					slices.ContainsFunc(subagentOrchestratorKeys, func(k string) bool { return strings.HasSuffix(d.Key, "subagent_orchestrator."+k) }) {
					t.Errorf("%s: %s", path, d)
				}
			}
			if want := strings.Contains(string(data), "enable_subagents: true"); cfg.Orchestrator.Subagents.Enabled != want {
				t.Errorf("%s: subagents enabled %v, want %v", path, cfg.Orchestrator.Subagents.Enabled, want)
			}
			for _, f := range cfg.IgnoredFeatures() {
				if slices.ContainsFunc(subagentKeys, func(k string) bool { return strings.HasPrefix(f, k) }) {
					t.Errorf("%s: %s listed as ignored", path, f)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 8 {
		t.Fatalf("%d configs mention enable_subagents, want the 8 of v0.1.73", n)
	}
}
