package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simWithIgnored is a runnable config that asks for two features this
// version does not have.
const simWithIgnored = `hooks: {PreToolUse: [{matcher: "*"}]}
agents:
  - id: a
    backend: {type: sim, vote_only: true}
`

// config validate --strict fails a config that would run without doing all
// it asks (any warning counts, as with upstream's --strict); --json says the
// same in fields, with the ignored features listed.
func TestConfigValidateStrict(t *testing.T) {
	files := map[string]string{"c.yaml": simWithIgnored, "ok.yaml": "agents:\n  - id: a\n    backend: {type: sim}\n"}
	lax := massgen(t, t.Context(), files, nil, "config", "validate", "c.yaml")
	if lax.code != 0 || !strings.Contains(lax.stdout, "ignored: hooks, vote_only (agent a)") {
		t.Errorf("without --strict: exit %d, stdout:\n%s", lax.code, lax.stdout)
	}
	strict := massgen(t, t.Context(), files, nil, "config", "validate", "--strict", "c.yaml")
	if strict.code != ExitConfig || !strings.Contains(strict.stderr, "--strict") || !strings.Contains(strict.stdout, "not valid under --strict") {
		t.Errorf("--strict: exit %d, want %d; stderr:\n%s", strict.code, ExitConfig, strict.stderr)
	}
	clean := massgen(t, t.Context(), files, nil, "config", "validate", "--strict", "ok.yaml")
	if clean.code != 0 {
		t.Errorf("--strict on a clean config: exit %d\n%s%s", clean.code, clean.stdout, clean.stderr)
	}

	js := massgen(t, t.Context(), files, nil, "config", "validate", "--strict", "--json", "c.yaml")
	var out struct {
		Valid           bool     `json:"valid"`
		Strict          bool     `json:"strict"`
		WarningCount    int      `json:"warning_count"`
		IgnoredFeatures []string `json:"ignored_features"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil {
		t.Fatalf("--json output %q: %v", js.stdout, err)
	}
	if js.code != ExitConfig || out.Valid || !out.Strict || out.WarningCount != 2 ||
		strings.Join(out.IgnoredFeatures, "|") != "hooks|vote_only (agent a)" {
		t.Errorf("--strict --json: exit %d, %+v", js.code, out)
	}
	okJS := massgen(t, t.Context(), files, nil, "config", "validate", "--json", "ok.yaml")
	if err := json.Unmarshal([]byte(okJS.stdout), &out); err != nil || !out.Valid || out.IgnoredFeatures == nil || len(out.IgnoredFeatures) != 0 {
		t.Errorf("clean --json = %s (%v): ignored_features must be an empty list", okJS.stdout, err)
	}
}

// A run whose config asks for features this version ignores says so in a
// stable line for scripts, and status.json lists them.
func TestAutomationReportsIgnoredFeatures(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{"c.yaml": simWithIgnored}, nil, "--automation", "--config", "c.yaml", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "\nWARNINGS: hooks, vote_only (agent a)\n") {
		t.Errorf("stdout lacks the WARNINGS line:\n%s", r.stdout)
	}
	var status struct {
		Meta struct {
			IgnoredFeatures []string `json:"ignored_features"`
		} `json:"meta"`
	}
	data, _ := os.ReadFile(filepath.Join(r.logDir(t), "status.json"))
	if err := json.Unmarshal(data, &status); err != nil || strings.Join(status.Meta.IgnoredFeatures, "|") != "hooks|vote_only (agent a)" {
		t.Errorf("status.json meta.ignored_features = %q (%v)", status.Meta.IgnoredFeatures, err)
	}

	clean := massgen(t, t.Context(), nil, nil, "--automation", "--config", "@examples/sim_single_agent", "q")
	if strings.Contains(clean.stdout, "WARNINGS") {
		t.Errorf("a clean config prints WARNINGS:\n%s", clean.stdout)
	}
	data, _ = os.ReadFile(filepath.Join(clean.logDir(t), "status.json"))
	if !strings.Contains(string(data), `"ignored_features": []`) {
		t.Errorf("status.json of a clean run must hold an empty ignored_features list:\n%s", data)
	}
}

// api_key: ${VAR} with VAR unset never falls back to the provider's usual
// variable: the run refuses, naming the agent and the variable.
func TestUnsetAPIKeyVariableRefusesTheRun(t *testing.T) {
	cfg := "agents:\n  - id: writer\n    backend:\n      type: openai\n      model: gpt-4o\n      api_key: ${TEAM_OPENAI_KEY}\n"
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, map[string]string{"OPENAI_API_KEY": "sk-someone-else"},
		"--no-logs", "--config", "c.yaml", "q")
	if r.code != ExitConfig {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, ExitConfig, r.stdout, r.stderr)
	}
	for _, want := range []string{"agent writer", "TEAM_OPENAI_KEY"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
