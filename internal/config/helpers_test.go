package config

import (
	"errors"
	"strings"
	"testing"
)

// envOf turns a map into a getenv function; tests never read the real
// environment, so they cannot depend on the machine they run on.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// parseOK parses src and fails the test on any error.
func parseOK(t *testing.T, src string, env map[string]string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src), "test.yaml", envOf(env))
	if err != nil {
		t.Fatalf("Parse failed:\n%v\nsource:\n%s", err, src)
	}
	return cfg
}

// diagnose returns every diagnostic for src, errors and warnings alike.
func diagnose(t *testing.T, src string, env map[string]string) Diagnostics {
	t.Helper()
	cfg, err := Parse([]byte(src), "test.yaml", envOf(env))
	if err == nil {
		return cfg.Warnings
	}
	var ds Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("Parse error is %T, want Diagnostics: %v", err, err)
	}
	return ds
}

// find returns the first diagnostic with the given key and severity.
func find(ds Diagnostics, key string, sev Severity) (Diagnostic, bool) {
	for _, d := range ds {
		if d.Key == key && d.Severity == sev {
			return d, true
		}
	}
	return Diagnostic{}, false
}

func dump(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("\n  ")
		b.WriteString(d.String())
	}
	return b.String()
}

// oneAgent is a valid agents list to which cases add what they test.
const oneAgent = `agents:
  - id: a
    backend: {type: openai, model: gpt-4o}
`
