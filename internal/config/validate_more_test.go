package config

import (
	"strings"
	"testing"
)

// One mistake must give one message: a key that fails its type check is not
// reported again by the semantic checks (e.g. a non-string id is not also
// "missing").
func TestOneMistakeOneMessage(t *testing.T) {
	tests := map[string]string{
		"non-string id":      "agents:\n  - id: 7\n    backend: {type: openai, model: gpt-4o}\n",
		"non-string model":   "agents:\n  - id: a\n    backend: {model: 4}\n",
		"quoted timeout":     oneAgent + "timeout_settings: {orchestrator_timeout_seconds: \"60\"}\n",
		"bad backend shape":  "agents:\n  - id: a\n    backend: openai\n",
		"bad context path":   oneAgent + "orchestrator:\n  context_paths: [{path: 3, permission: read}]\n",
		"every agent broken": "agents:\n  - 1\n  - 2\n",
		"agents is a string": "agents: a\n",
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			ds := diagnose(t, src, nil).Errors()
			want := 1
			if name == "every agent broken" {
				want = 2
			}
			if len(ds) != want {
				t.Errorf("got %d errors, want %d:%s", len(ds), want, dump(ds))
			}
		})
	}
}

// Errors come back sorted by position with warnings included, so --validate
// can print everything in file order.
func TestDiagnosticsSortedWithWarnings(t *testing.T) {
	src := "agents:\n  - id: a\n    colour: red\n    backend: {type: opena, model: m}\n  - id: a\n    backend: {type: openai, model: gpt-4o}\n"
	ds := diagnose(t, src, nil)
	var got []string
	for _, d := range ds {
		got = append(got, d.Key)
	}
	want := []string{"agents[0].colour", "agents[0].backend.type", "agents[1].id"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keys in order = %v, want %v", got, want)
	}
	if n := len(ds.Errors()); n != 2 {
		t.Errorf("Errors() = %d, want 2", n)
	}
	if n := len(ds.Warnings()); n != 1 {
		t.Errorf("Warnings() = %d, want 1", n)
	}
}

// Validate works on configs built in code: it checks values, names keys,
// and has no positions to give.
func TestValidateCodeBuilt(t *testing.T) {
	good := New(Agent{ID: "x", Backend: Backend{Type: "sim", Model: "sim", Stream: true}})
	if ds := good.Validate(); len(ds) != 0 {
		t.Errorf("New(valid agent).Validate() = %s", dump(ds))
	}

	bad := New(
		Agent{ID: "x", Backend: Backend{Type: "openai"}},
		Agent{ID: "x", Backend: Backend{Type: "gemeni", Model: "gemini-2.5-flash"}},
	)
	bad.Orchestrator.VotingSensitivity = "loose"
	bad.Orchestrator.TimeoutSeconds = 0
	bad.Orchestrator.ContextPaths = []ContextPath{{Path: "", Permission: "read"}}
	bad.UI.DisplayType = "gui"
	ds := bad.Validate()
	want := map[string]string{
		"agents[0].backend.model":                       "backend has no 'model'",
		"agents[1].id":                                  "duplicate agent id 'x' (first at agents[0])",
		"agents[1].backend.type":                        "unknown backend type 'gemeni'",
		"orchestrator.voting_sensitivity":               "invalid voting_sensitivity 'loose'",
		"timeout_settings.orchestrator_timeout_seconds": "must be a positive number of seconds, got 0",
		"orchestrator.context_paths[0].path":            "has no 'path'",
		"ui.display_type":                               "invalid display type 'gui'",
	}
	for key, msg := range want {
		d, ok := find(ds, key, Error)
		if !ok {
			t.Errorf("no error for %s; got:%s", key, dump(ds))
			continue
		}
		if !strings.Contains(d.Message, msg) || d.Line != 0 || d.File != "" {
			t.Errorf("%s: got %q at %d (file %q), want %q without position", key, d.Message, d.Line, d.File, msg)
		}
	}
	if len(ds) != len(want) {
		t.Errorf("got %d diagnostics, want %d:%s", len(ds), len(want), dump(ds))
	}

	if ds := (&Config{}).Validate(); !ds.HasErrors() {
		t.Error("empty Config validated without errors")
	}
}
