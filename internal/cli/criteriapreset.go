package cli

import (
	"strings"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/coord"
)

// applyPreset gives the run upstream's criteria set named by
// --checklist-criteria-preset, as upstream's flag overrides the config's
// checklist_criteria_preset; --eval-criteria, given too, wins (its
// criteria are read after).
func (m *modeFlags) applyPreset(rq *app.Request) error {
	if m.preset == "" {
		return nil
	}
	cs, ok := coord.PresetCriteria(m.preset)
	if !ok {
		return usageErr("--checklist-criteria-preset %q: no such preset (%s)", m.preset, strings.Join(coord.PresetNames(), ", "))
	}
	rq.EvalCriteria = cs
	return nil
}
