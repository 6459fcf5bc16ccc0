package config

import (
	"fmt"
	"slices"

	"github.com/massgen/massgen/internal/coord"
)

// ChecklistKeys are checklist-gated voting's keys besides the gate itself:
// the diagnostic report gate, draft_approach's impact floors and the
// criteria preset (internal/coord: checklist_report.go, draft.go,
// presets.go).
type ChecklistKeys struct {
	// NoReport turns the diagnostic report gate off:
	// checklist_require_gap_report: false, or gap_report_mode: none.
	// ReportMode is gap_report_mode as written ("" unset).
	NoReport   bool
	ReportMode string
	// Preset is coordination.checklist_criteria_preset.
	Preset string
	// Improvements is coordination.improvements (nil: upstream's floors).
	Improvements *coord.Improvements
}

// checklistKeys are the keys checklistKey reads, under orchestrator
// (the first two) and orchestrator.coordination.
var checklistKeys = []string{"checklist_require_gap_report", "gap_report_mode", "checklist_criteria_preset", "improvements"}

// checklistKey reads one of checklistKeys into k. Upstream's validator
// refuses a gap_report_mode or a preset it does not know, and so does
// this one.
func (d *decoder) checklistKey(k *ChecklistKeys, t *pair, key string) {
	switch t.key {
	case "checklist_require_gap_report":
		if b, ok := d.boolean(key, t); ok && k.ReportMode == "" {
			k.NoReport = !b // as upstream's CLI: mode separate when true, none when false
		}
	case "gap_report_mode":
		s, ok := d.str(key, t)
		if !ok {
			return
		}
		if !slices.Contains(gapReportModes, s) {
			d.fail(t.val.pos, key, fmt.Sprintf("invalid gap_report_mode '%s'", s), oneOf(s, gapReportModes))
			return
		}
		k.ReportMode, k.NoReport = s, s == "none"
	case "checklist_criteria_preset":
		if !d.present(key, t) || t.val.isNull() {
			return
		}
		s, ok := d.str(key, t)
		if !ok {
			return
		}
		if _, known := coord.CriteriaPresets[s]; !known {
			d.fail(t.val.pos, key, fmt.Sprintf("invalid checklist_criteria_preset '%s'", s), oneOf(s, coord.PresetNames()))
			return
		}
		k.Preset = s
	case "improvements":
		m, ok := d.mapping(key, t, "a map of min_transformative, min_structural, min_non_incremental")
		if !ok {
			return
		}
		imp := coord.Improvements{NonIncremental: 1}
		for _, e := range m.pairs {
			ekey := join(key, e.key)
			v, ok := d.integer(ekey, e, "a whole number (0 or more)")
			if !ok {
				continue
			}
			switch e.key {
			case "min_transformative":
				imp.Transformative = v
			case "min_structural":
				imp.Structural = v
			case "min_non_incremental":
				imp.NonIncremental = v
			default:
				d.unknown(e, key, []string{"min_transformative", "min_structural", "min_non_incremental"})
			}
		}
		k.Improvements = &imp
	}
}

// checklistCriteria are the checklist's criteria by upstream's priority:
// checklist_criteria_inline, then the preset, then — with the changedoc
// on, its default — the changedoc set; none leaves coord's generic four.
// Generated criteria (evaluation_criteria_generator) replace them when
// the run starts.
func (c *Config) checklistCriteria() []coord.Criterion {
	o := c.Orchestrator
	switch {
	case len(o.ChecklistCriteria) > 0:
		return o.ChecklistCriteria
	case o.Checklist.Preset != "":
		cs, _ := coord.PresetCriteria(o.Checklist.Preset)
		return cs
	case !o.Isolation.NoChangedoc:
		return slices.Clone(coord.ChangedocCriteria)
	}
	return nil
}
