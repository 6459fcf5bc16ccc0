package coord

import (
	"maps"
	"slices"
)

// PresetNames are checklist_criteria_preset's valid values, sorted.
func PresetNames() []string { return slices.Sorted(maps.Keys(CriteriaPresets)) }

// PresetCriteria is the criteria set of preset name, a copy.
func PresetCriteria(name string) ([]Criterion, bool) {
	c, ok := CriteriaPresets[name]
	return slices.Clone(c), ok
}
