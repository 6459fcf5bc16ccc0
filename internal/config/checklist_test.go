package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/massgen/massgen/internal/coord"
)

const gatedAgent = `agents:
  - id: a
    backend: {type: openai, model: gpt-4o}
orchestrator:
  voting_sensitivity: checklist_gated
`

// The report gate is on by default (upstream's checklist_require_gap_report
// default); checklist_require_gap_report: false or gap_report_mode: none turn
// it off; gap_report_mode wins over checklist_require_gap_report.
func TestTheReportGateKeys(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		gate bool
	}{
		{"", true},
		{"  checklist_require_gap_report: true\n", true},
		{"  checklist_require_gap_report: false\n", false},
		{"  gap_report_mode: none\n", false},
		{"  gap_report_mode: separate\n", true},
		{"  gap_report_mode: changedoc\n  checklist_require_gap_report: false\n", true},
		{"  gap_report_mode: none\n  checklist_require_gap_report: true\n", false},
	} {
		cfg := parseOK(t, gatedAgent+tc.yaml, nil)
		if len(cfg.IgnoredFeatures()) > 0 {
			t.Errorf("%q: ignored %q", tc.yaml, cfg.IgnoredFeatures())
		}
		s, err := cfg.Settings()
		if err != nil {
			t.Fatal(err)
		}
		if s.Checklist.Report != tc.gate {
			t.Errorf("%q: report gate %v, want %v", tc.yaml, s.Checklist.Report, tc.gate)
		}
	}
	if ds := diagnose(t, gatedAgent+"  gap_report_mode: sometimes\n", nil); len(ds.Errors()) != 1 || !strings.Contains(ds.Errors()[0].Message, "gap_report_mode") {
		t.Errorf("an invalid gap_report_mode: %s", dump(ds))
	}
}

// Criteria by upstream's priority: inline, then the preset, then the
// changedoc set while the changedoc is on (its default), else coord's
// generic four.
func TestChecklistCriteriaPresetAndFallbacks(t *testing.T) {
	crit := func(yaml string) []coord.Criterion {
		t.Helper()
		cfg := parseOK(t, gatedAgent+yaml, nil)
		if len(cfg.IgnoredFeatures()) > 0 {
			t.Errorf("%q: ignored %q", yaml, cfg.IgnoredFeatures())
		}
		s, err := cfg.Settings()
		if err != nil {
			t.Fatal(err)
		}
		return s.Checklist.Criteria
	}
	planning, _ := coord.PresetCriteria("planning")
	if len(planning) != 7 || !strings.Contains(planning[0].Text, "plan") {
		t.Fatalf("the planning preset: %+v", planning)
	}
	if diff := cmp.Diff(planning, crit("  coordination: {checklist_criteria_preset: planning}\n")); diff != "" {
		t.Errorf("preset (-want +got):\n%s", diff)
	}
	inline := crit("  coordination:\n    checklist_criteria_preset: planning\n    checklist_criteria_inline: [{text: mine}]\n")
	if len(inline) != 1 || inline[0].Text != "mine" {
		t.Errorf("inline criteria must win over the preset: %+v", inline)
	}
	if diff := cmp.Diff(coord.ChangedocCriteria, crit("")); diff != "" {
		t.Errorf("changedoc fallback (-want +got):\n%s", diff)
	}
	if got := crit("  coordination: {enable_changedoc: false}\n"); got != nil {
		t.Errorf("without the changedoc, coord's generic criteria (nil) are used: %+v", got)
	}
	ds := diagnose(t, gatedAgent+"  coordination: {checklist_criteria_preset: planing}\n", nil)
	if len(ds.Errors()) != 1 || !strings.Contains(ds.Errors()[0].Suggestion+ds.Errors()[0].Message, "planning") {
		t.Errorf("an unknown preset is refused with the nearest name: %s", dump(ds))
	}
	for _, name := range []string{"persona", "decomposition", "evaluation", "prompt", "analysis", "planning", "spec", "round_evaluator"} {
		if cs, ok := coord.PresetCriteria(name); !ok || len(cs) < 5 {
			t.Errorf("preset %s: %d criteria", name, len(cs))
		}
	}
}

// coordination.improvements sets draft_approach's impact floors.
func TestImprovementsFloors(t *testing.T) {
	cfg := parseOK(t, gatedAgent+"  coordination: {improvements: {min_transformative: 1, min_non_incremental: 2}}\n", nil)
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := &coord.Improvements{Transformative: 1, NonIncremental: 2}
	if diff := cmp.Diff(want, s.Checklist.Improvements); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(cfg.IgnoredFeatures()) > 0 {
		t.Errorf("ignored %q", cfg.IgnoredFeatures())
	}
}
