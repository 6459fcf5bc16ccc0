package config

import (
	"strings"
	"testing"
)

// compression_target_ratio is acted on (no warning) and must be a fraction.
func TestCompressionTargetRatio(t *testing.T) {
	cfg := parseOK(t, oneAgent+"orchestrator:\n  coordination:\n    compression_target_ratio: 0.35\n", nil)
	if len(cfg.IgnoredFeatures()) != 0 || len(cfg.Warnings) != 0 {
		t.Errorf("ignored %q, warnings %s", cfg.IgnoredFeatures(), dump(cfg.Warnings))
	}
	if cfg.Orchestrator.CompressionRatio != 0.35 {
		t.Errorf("ratio %v, want 0.35", cfg.Orchestrator.CompressionRatio)
	}
	for _, bad := range []string{"0", "1", "1.5", "-0.2"} {
		ds := diagnose(t, oneAgent+"orchestrator:\n  coordination:\n    compression_target_ratio: "+bad+"\n", nil)
		if errs := ds.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Message, "between 0 and 1") || errs[0].Line != 6 {
			t.Errorf("%s: %s, want one error at line 6 saying between 0 and 1", bad, dump(ds))
		}
	}
}
