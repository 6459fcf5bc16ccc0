package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that every failure
// is a Diagnostics of one-line, Error-bearing messages. `go test` runs only
// the seeds; `go test -fuzz=FuzzParse ./internal/config` explores further.
func FuzzParse(f *testing.F) {
	seeds := []string{
		oneAgent,
		"agent:\n  backend: {type: sim}\n",
		`{"agents": [{"id": "a", "backend": {"type": "openai", "model": "gpt-4o"}}]}`,
		"agents:\n  - id: a\n    backend: {type: opena, model: 4, enable_web_search: \"true\"}\n",
		"base: &b {type: openai, model: m}\nagents:\n  - {id: a, backend: {<<: *b, temperature: 1}}\n",
		"a: &a [*a]\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
		"agents: [\n",
		"models: [a]\n",
		"---\n---\n",
		"? [a]\n: b\n",
		"agents:\n  - id: !!str 1\n    backend: !!map {type: sim}\n",
		"orchestrator:\n  timeout: {orchestrator_timeout_seconds: .inf}\n  max_new_answers_per_agent: 99999999999999999999\n",
		"agents:\n  - id: \"${A:-${B}}\"\n    backend: {type: sim, ttft_ms: 1.5, scenario: [x]}\n",
		"\t\x00\xff",
		"agents:\n- id: a\n  backend:\n    type: sim\n   model: x\n",
	}
	// Past the pre-parse limits (inputlimit.Config): nesting, aliases.
	seeds = append(seeds,
		strings.Repeat("[", 5000),
		"agents: "+strings.Repeat("{a: ", 1000),
		strings.Repeat("- ", 100)+"x\n",
		"a: x\n  - y: 'z\nb: "+strings.Repeat("[", 100)+"\n",
		billionLaughs(),
	)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml", func(string) string { return "v" })
		if err == nil {
			if cfg == nil || len(cfg.Agents) == 0 {
				t.Fatalf("success without agents: %+v", cfg)
			}
			return
		}
		var ds Diagnostics
		if !errors.As(err, &ds) || !ds.HasErrors() {
			t.Fatalf("error is not Diagnostics with an error: %T %v", err, err)
		}
		for _, d := range ds {
			if s := d.String(); strings.ContainsAny(s, "\r\n") {
				t.Fatalf("multi-line diagnostic: %q", s)
			}
		}
	})
}
