package config

import (
	"strings"
	"testing"
)

// max_new_answers_global is acted on (no warning): the team's cap.
func TestMaxNewAnswersGlobal(t *testing.T) {
	cfg := parseOK(t, oneAgent+"orchestrator:\n  max_new_answers_global: 6\n", nil)
	if len(cfg.IgnoredFeatures()) != 0 || len(cfg.Warnings) != 0 {
		t.Errorf("ignored %q, warnings %s", cfg.IgnoredFeatures(), dump(cfg.Warnings))
	}
	s, err := cfg.Settings()
	if err != nil || s.MaxAnswersGlobal != 6 {
		t.Errorf("settings %+v (%v), want a global cap of 6", s, err)
	}
	ds := diagnose(t, oneAgent+"orchestrator:\n  max_new_answers_global: 0\n", nil)
	if errs := ds.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Message, "1 or more") || errs[0].Line != 5 {
		t.Errorf("a cap of 0: %s", dump(ds))
	}
}
