package config

import (
	"fmt"
	"slices"
	"strings"
)

// PersonaGenerator is orchestrator.coordination.persona_generator: before
// the run, each agent gets a persona of its own (orchestrator.Personas).
type PersonaGenerator struct {
	// DiversityMode is perspective (the default), implementation or
	// methodology; AfterFirstAnswer is drop (the default), soften or keep;
	// Guidelines are persona_guidelines.
	DiversityMode, AfterFirstAnswer, Guidelines string
}

var (
	diversityModes    = []string{"perspective", "implementation", "methodology"}
	afterFirstAnswers = []string{"drop", "soften", "keep"}
	personaKeys       = []string{"enabled", "diversity_mode", "after_first_answer", "persona_guidelines", "persist_across_turns"}
)

// personaGenerator reads coordination.persona_generator; it is on only
// with enabled: true, as upstream. A value upstream does not know is a
// warning that names the default used instead, as upstream falls back to
// it (silently, there).
func (d *decoder) personaGenerator(p *pair, key string) {
	m, ok := d.mapping(key, p, "a map with 'enabled'")
	if !ok {
		return
	}
	g := PersonaGenerator{DiversityMode: "perspective", AfterFirstAnswer: "drop"}
	enabled := false
	choice := func(ekey string, e *pair, values []string, dst *string) {
		v, ok := d.str(ekey, e)
		if !ok {
			return
		}
		if v = strings.TrimSpace(v); slices.Contains(values, v) {
			*dst = v
			return
		}
		d.warnAt(e.val.pos, ekey, fmt.Sprintf("'%s' is not one of %s: %s is used", v, strings.Join(values, ", "), *dst),
			didYouMean(v, values))
	}
	for _, e := range m.pairs {
		ekey := join(key, e.key)
		switch e.key {
		case "enabled":
			enabled, _ = d.boolean(ekey, e)
		case "diversity_mode":
			choice(ekey, e, diversityModes, &g.DiversityMode)
		case "after_first_answer":
			choice(ekey, e, afterFirstAnswers, &g.AfterFirstAnswer)
		case "persona_guidelines":
			if e.val.kind != kindNull {
				g.Guidelines, _ = d.str(ekey, e)
			}
		case "persist_across_turns":
			if b, ok := d.boolean(ekey, e); ok && b {
				d.ignore(e.keyPos, ekey, e.key, "'persist_across_turns' is accepted but ignored: each turn writes its own personas", "")
			}
		default:
			d.unknown(e, key, personaKeys)
		}
	}
	if enabled {
		d.cfg.Orchestrator.Personas = &g
	}
}
