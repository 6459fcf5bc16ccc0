package app

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
)

var (
	memoryOn = regexp.MustCompile(`(?m)^\s*enable_memory_filesystem_mode:\s*true\b`)
	skillsOn = regexp.MustCompile(`(?m)^\s*use_skills:\s*true\b`)
	// misplacedSkillsDir is skills_directory directly under orchestrator:
	misplacedSkillsDir = regexp.MustCompile(`(?m)^  skills_directory:`)
	kitKeys            = []string{"enable_memory_filesystem_mode", "learning_capture_mode", "disable_final_only_round_capture_fallback",
		"use_skills", "skills_directory", "massgen_skills", "load_previous_session_skills"}
)

// checkKit is TestV073ConfigsRunAgainstTheSimulator's check of a config
// that turns filesystem memory or skills on (26 of v0.1.73's; v0.1.12 has
// none): none of their keys is ignored (but orchestrator.skills_directory,
// where upstream does not read it either: meta/massgen_evaluates_terminal),
// the winner's workspace has the memory tiers, and an API agent's prompt
// (recs: the run's requests) has the memory and skills sections.
func checkKit(t *testing.T, data []byte, out *Outcome, recs []llmsim.Record) {
	t.Helper()
	if !memoryOn.Match(data) && !skillsOn.Match(data) {
		return
	}
	for _, ig := range out.IgnoredFeatures {
		if ig == "skills_directory" && misplacedSkillsDir.Match(data) {
			continue
		}
		if slices.ContainsFunc(kitKeys, func(k string) bool { return strings.HasPrefix(ig, k) }) {
			t.Errorf("ignored: %s", ig)
		}
	}
	if memoryOn.Match(data) && out.Workspace != "" {
		for _, tier := range []string{"short_term", "long_term"} {
			if fi, err := os.Stat(filepath.Join(out.Workspace, "memory", tier)); err != nil || !fi.IsDir() {
				t.Errorf("the winner's workspace has no memory/%s: %v", tier, err)
			}
		}
	}
	if cliBackend.Match(data) {
		return // a CLI agent's prompt reaches its CLI, not the system message
	}
	sys := ""
	for _, r := range recs {
		if len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, "massgen_coordination") {
			sys = r.Messages[0].Content
			break
		}
	}
	if memoryOn.Match(data) && !strings.Contains(sys, "<memory priority=\"high\">") {
		t.Errorf("no memory section in the prompt:\n%s", sys)
	}
	if skillsOn.Match(data) && !strings.Contains(sys, "<name>file-search</name>") {
		t.Errorf("no skills section in the prompt:\n%s", sys)
	}
}
