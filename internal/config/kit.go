package config

import (
	"fmt"
	"slices"
)

// kit reads the orchestrator.coordination keys of filesystem memory and
// skills into Kit (internal/kit acts on them). An invalid
// learning_capture_mode is an error, as upstream's validator makes it.
func (d *decoder) kit(k *Kit, t *pair, key string) {
	switch t.key {
	case "enable_memory_filesystem_mode":
		k.Memory, _ = d.boolean(key, t)
	case "disable_final_only_round_capture_fallback":
		k.NoCaptureFallback, _ = d.boolean(key, t)
	case "use_skills":
		k.UseSkills, _ = d.boolean(key, t)
	case "load_previous_session_skills":
		k.PreviousSkills, _ = d.boolean(key, t)
	case "skills_directory":
		k.SkillsDirectory, _ = d.str(key, t)
	case "massgen_skills":
		k.MassgenSkills, _ = d.stringList(key, t)
	case "learning_capture_mode":
		s, ok := d.str(key, t)
		if !ok {
			return
		}
		if s != "" && !slices.Contains(learningModes, s) {
			d.fail(t.val.pos, key, fmt.Sprintf("invalid learning_capture_mode '%s'", s), oneOf(s, learningModes))
			return
		}
		k.LearningCapture = s
	}
}
