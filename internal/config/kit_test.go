package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The memory and skills keys of orchestrator.coordination are read into
// Kit, draw no "ignored" warning and are not in IgnoredFeatures; an
// invalid learning_capture_mode is an error at its line.
func TestKitKeysAreDecodedNotIgnored(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  coordination:
    enable_memory_filesystem_mode: true
    learning_capture_mode: verification_and_final_only
    disable_final_only_round_capture_fallback: true
    use_skills: true
    skills_directory: .agent/skills
    massgen_skills: [file-search]
    load_previous_session_skills: true
`, nil)
	want := Kit{Memory: true, LearningCapture: "verification_and_final_only", NoCaptureFallback: true, UseSkills: true,
		SkillsDirectory: ".agent/skills", MassgenSkills: []string{"file-search"}, PreviousSkills: true}
	if d := cmp.Diff(want, cfg.Orchestrator.Kit); d != "" {
		t.Errorf("Kit (-want +got):\n%s", d)
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w.Key, "coordination") {
			t.Errorf("unexpected warning %s", w)
		}
	}
	if got := cfg.IgnoredFeatures(); len(got) != 0 {
		t.Errorf("IgnoredFeatures = %q, want none", got)
	}
	for _, k := range []string{"enable_memory_filesystem_mode", "learning_capture_mode", "use_skills", "skills_directory",
		"massgen_skills", "load_previous_session_skills", "disable_final_only_round_capture_fallback"} {
		if _, ignored := ignoredFeature(k); ignored || !slices.Contains(implementedKeys, k) {
			t.Errorf("%s: ignored %v, implemented %v", k, ignored, slices.Contains(implementedKeys, k))
		}
	}
	_, err := Parse([]byte(oneAgent+"orchestrator:\n  coordination:\n    learning_capture_mode: sometimes\n"), "c.yaml", func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "learning_capture_mode") || !strings.Contains(err.Error(), "c.yaml:") {
		t.Errorf("invalid learning_capture_mode: err = %v", err)
	}
}
