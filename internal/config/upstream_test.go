package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// v0.1.73's display types all load and map onto massgen's displays; none is
// an error, and web (upstream's browser UI) warns and runs the default.
func TestV073DisplayTypesMapToOurDisplays(t *testing.T) {
	for in, want := range map[string]string{
		"textual_terminal": "textual_terminal", "rich_terminal": "rich_terminal", "simple": "simple",
		"terminal": "terminal", "silent": "silent", "none": "silent", "textual": "textual", "rich": "rich",
		"web": DefaultDisplayType,
	} {
		cfg := parseOK(t, oneAgent+"ui: {display_type: "+in+"}\n", nil)
		if cfg.UI.DisplayType != want {
			t.Errorf("%s: DisplayType %q, want %q", in, cfg.UI.DisplayType, want)
		}
		w, warned := find(cfg.Warnings, "ui.display_type", Warning)
		if warned != (in == "web") {
			t.Errorf("%s: warning %s (found %v)", in, w, warned)
		}
		if in == "web" && (w.Line != 4 || !slices.Contains(cfg.IgnoredFeatures(), "display_type: web")) {
			t.Errorf("web: warning %s, ignored %q", w, cfg.IgnoredFeatures())
		}
	}
	if DefaultUI().DisplayType != "textual_terminal" {
		t.Errorf("default display %q, want v0.1.73's textual_terminal", DefaultUI().DisplayType)
	}
	// ui.type (written by 24 upstream examples) maps the same way.
	if cfg := parseOK(t, oneAgent+"ui: {type: none}\n", nil); cfg.UI.DisplayType != "silent" {
		t.Errorf("ui.type none: %q", cfg.UI.DisplayType)
	}
}

// v0.1.73's voting sensitivities load, vote by the nearest level massgen
// implements, say so at their line, and keep the value for later.
func TestV073VotingSensitivitiesLoad(t *testing.T) {
	for _, v := range votingValues {
		cfg := parseOK(t, oneAgent+"orchestrator:\n  voting_sensitivity: "+v+"\n", nil)
		o := cfg.Orchestrator
		if !slices.Contains(levelValues, o.VotingSensitivity) {
			t.Errorf("%s: votes by %q, which coord does not know", v, o.VotingSensitivity)
		}
		w, warned := find(cfg.Warnings, "orchestrator.voting_sensitivity", Warning)
		if slices.Contains(levelValues, v) {
			if warned || o.VotingSensitivity != v {
				t.Errorf("%s: %q, warning %s", v, o.VotingSensitivity, w)
			}
			continue
		}
		if v == "checklist_gated" { // implemented: the gate, with the strict prompt
			if warned || !o.ChecklistGated || o.VotingSensitivity != "strict" {
				t.Errorf("%s: gated %v, %q, warning %s", v, o.ChecklistGated, o.VotingSensitivity, w)
			}
			continue
		}
		if !warned || w.Line != 5 || !strings.Contains(w.Message, v) || !strings.Contains(w.Message, "'"+votingFallback[v]+"' rules") {
			t.Errorf("%s: warning %s (found %v)", v, w, warned)
		}
		if o.Extra["voting_sensitivity"] != v || !slices.Contains(cfg.IgnoredFeatures(), "voting_sensitivity: "+v) {
			t.Errorf("%s: extra %v, ignored %q", v, o.Extra, cfg.IgnoredFeatures())
		}
	}
	// A config built in code cannot ask for what coord does not implement.
	c := New(Agent{ID: "a", Backend: Backend{Type: "sim", Model: "sim"}})
	c.Orchestrator.VotingSensitivity = "checklist_gated"
	if ds := c.Validate(); len(ds.Errors()) != 1 || !strings.Contains(ds.Errors()[0].Suggestion, "lenient, balanced or strict") {
		t.Errorf("built in code: %s", dump(ds))
	}
}

// The coordination keys of v0.1.73 load with a warning that names their
// feature, type-checked as upstream checks them; a value that asks for
// nothing draws no warning.
func TestV073CoordinationKeys(t *testing.T) {
	warn := []struct{ src, key, feature string }{
		{"orchestrator:\n  defer_voting_until_all_answered: true\n", "orchestrator.defer_voting_until_all_answered", "deferred voting"},
		{"orchestrator:\n  coordination:\n    subagent_runtime_mode: inherited\n", "orchestrator.coordination.subagent_runtime_mode", "subagents"},
		{"ui:\n  theme: dark\n", "ui.theme", "themes"},
		{"display:\n  type: textual_terminal\n", "display", "upstream MassGen does not read it"},
	}
	for _, tc := range warn {
		cfg := parseOK(t, oneAgent+tc.src, nil)
		w, ok := find(cfg.Warnings, tc.key, Warning)
		if !ok || w.Line == 0 || !strings.Contains(w.Message, tc.feature) {
			t.Errorf("%s: warning %s (found %v), want one naming %q:%s", tc.key, w, ok, tc.feature, dump(cfg.Warnings))
		}
		name := tc.key[strings.LastIndex(tc.key, ".")+1:]
		if !slices.ContainsFunc(cfg.IgnoredFeatures(), func(s string) bool { return strings.HasPrefix(s, name) }) {
			t.Errorf("%s not in IgnoredFeatures %q", name, cfg.IgnoredFeatures())
		}
	}
	quiet := oneAgent + `orchestrator:
  coordination_mode: voting
  final_answer_strategy: winner_present
  fairness_enabled: false
  coordination:
    write_mode: legacy
    novelty_injection: none
    enable_changedoc: false
    broadcast: false
    evaluation_criteria_generator: {enabled: false, max_criteria: 5}
ui: {skip_agent_selector: true}
`
	if cfg := parseOK(t, quiet, nil); len(cfg.Warnings) != 0 {
		t.Errorf("values that ask for nothing warn:%s", dump(cfg.Warnings))
	}
	bad := []struct{ src, key, sugg string }{
		{"orchestrator:\n  coordination:\n    write_mode: autp\n", "orchestrator.coordination.write_mode", "did you mean 'auto'?"},
		{"orchestrator:\n  fairness_lead_cap_answers: two\n", "orchestrator.fairness_lead_cap_answers", ""},
		{"orchestrator:\n  final_answer_strategy: reuse\n", "orchestrator.final_answer_strategy", "winner_reuse"},
		{"orchestrator:\n  voting_sensitivity: checklist_gate\n", "orchestrator.voting_sensitivity", "did you mean 'checklist_gated'?"},
	}
	for _, tc := range bad {
		ds := diagnose(t, oneAgent+tc.src, nil)
		d, ok := find(ds, tc.key, Error)
		if !ok || d.Line == 0 || !strings.Contains(d.Suggestion, tc.sugg) {
			t.Errorf("%s: error %s (found %v), want a suggestion with %q", tc.key, d, ok, tc.sugg)
		}
	}
}

// skip_final_presentation is v0.1.73's ui.enable_final_presentation: false;
// the ui key, more specific, wins when both are set.
func TestSkipFinalPresentation(t *testing.T) {
	cfg := parseOK(t, oneAgent+"orchestrator: {skip_final_presentation: true}\n", nil)
	if p := cfg.UI.EnableFinalPresentation; p == nil || *p || len(cfg.Warnings) != 0 {
		t.Errorf("EnableFinalPresentation %v, warnings:%s", p, dump(cfg.Warnings))
	}
	cfg = parseOK(t, oneAgent+"orchestrator: {skip_final_presentation: true}\nui: {enable_final_presentation: true}\n", nil)
	if p := cfg.UI.EnableFinalPresentation; p == nil || !*p {
		t.Errorf("the ui key does not win: %v", p)
	}
}

// The CLI agents' credential mounts are shared like the others; env_file
// is read relative to the config file, and with env_vars_from_file it
// loads without a warning.
func TestV073DockerCredentials(t *testing.T) {
	src := `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_credentials:
        mount: [claude_config, codex_config, gemini_config]
        env_file: .env
        env_vars_from_file: [OPENAI_API_KEY, GEMINI_API_KEY]
`
	cfg, err := Parse([]byte(src), "/srv/team/config.yaml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	dk := cfg.Agents[0].Backend.CommandLine.Docker
	if !slices.Equal(dk.CredentialFiles, []string{".claude", ".codex", ".gemini"}) {
		t.Errorf("CredentialFiles %q", dk.CredentialFiles)
	}
	if dk.EnvFile != "/srv/team/.env" || !slices.Equal(dk.EnvFromFile, []string{"OPENAI_API_KEY", "GEMINI_API_KEY"}) {
		t.Errorf("EnvFile %q, EnvFromFile %q", dk.EnvFile, dk.EnvFromFile)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings:%s", dump(cfg.Warnings))
	}
	// An absolute path stays as written; ~/ is the user's home.
	for in, want := range map[string]string{"/etc/massgen.env": "/etc/massgen.env", "~/keys.env": filepath.Join(os.Getenv("HOME"), "keys.env"),
		"../keys/.env": "/srv/keys/.env"} {
		cfg, err := Parse([]byte(strings.Replace(src, "env_file: .env", "env_file: "+in, 1)), "/srv/team/config.yaml", envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Agents[0].Backend.CommandLine.Docker.EnvFile; got != want {
			t.Errorf("env_file %s: %q, want %q", in, got, want)
		}
	}
}

// The credential keys' types are checked where they are written; a list
// of names without a file to read them from says so.
func TestDockerCredentialEnvTypes(t *testing.T) {
	head := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      cwd: ws\n      enable_mcp_command_line: true\n" +
		"      command_line_execution_mode: docker\n      command_line_docker_credentials:\n"
	const k = "agents[0].backend.command_line_docker_credentials."
	for _, c := range []struct {
		body, key, want string
		line            int
	}{
		{"        env_file: [a, b]\n", k + "env_file", "a string", 10},
		{"        env_file: .env\n        env_vars_from_file: OPENAI_API_KEY\n", k + "env_vars_from_file", "list", 11},
		{"        env_file: .env\n        env_vars_from_file: [OPENAI_API_KEY, 3]\n", k + "env_vars_from_file[1]", "string", 11},
	} {
		ds := diagnose(t, head+c.body, nil)
		d, ok := find(ds, c.key, Error)
		if !ok || d.File != "test.yaml" || d.Line != c.line || !strings.Contains(d.Message, c.want) {
			t.Errorf("%q: %s (found %v); all:%s", c.body, d, ok, dump(ds))
		}
	}
	ds := diagnose(t, head+"        env_vars_from_file: [OPENAI_API_KEY]\n", nil)
	if w, ok := find(ds, k+"env_vars_from_file", Warning); !ok || w.Line != 10 || !strings.Contains(w.Message, "without 'env_file'") {
		t.Errorf("no warning for a list without a file:%s", dump(ds))
	}
}

// Upstream's rate-limits file lies among its example configs: it is named
// for what it is, not "the config defines no agents".
func TestRateLimitsFileIsNamed(t *testing.T) {
	ds := diagnose(t, "# limits\ngemini:\n  gemini-2.5-flash:\n    rpm: 9\n    tpm: 240000\nopenai:\n  gpt-4o: {rpm: 500}\n", nil)
	if len(ds) != 1 || ds[0].Severity != Error || ds[0].Line != 2 || !strings.Contains(ds[0].Message, "rate-limits file") ||
		!strings.Contains(ds[0].Suggestion, "requests_per_minute") {
		t.Errorf("diagnostics:%s", dump(ds))
	}
	if ds := diagnose(t, "gemini:\n  model: x\n", nil); !strings.Contains(ds[len(ds)-1].Message, "defines no agents") {
		t.Errorf("not a rate-limits file:%s", dump(ds))
	}
}
