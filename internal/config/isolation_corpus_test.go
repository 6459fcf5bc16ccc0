package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// isolationKey finds the configs that set one of isolationKeys.
var isolationKey = regexp.MustCompile(`(?m)^\s*(write_mode|drift_conflict_policy|enable_changedoc|fast_iteration_mode)\s*:`)

// The upstream configs of both corpora that set write_mode,
// drift_conflict_policy, enable_changedoc or fast_iteration_mode load with
// no warning about them and nothing of them in IgnoredFeatures; what they
// set is what Isolation holds.
func TestUpstreamConfigsOfIsolationLoadQuietly(t *testing.T) {
	found := 0
	for _, corpus := range referenceCorpora {
		if _, err := os.Stat(corpus.dir); err != nil {
			t.Skipf("reference configs not found at %s (they live beside the project, not in it): %v", corpus.dir, err)
		}
		filepath.WalkDir(corpus.dir, func(path string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || filepath.Ext(path) != ".yaml" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil || !isolationKey.Match(data) {
				return err
			}
			found++
			rel, _ := filepath.Rel(corpus.dir, path)
			cfg, diags := parse(data, path, envOf(nil))
			for _, d := range diags {
				if isolationKey.MatchString(d.Key+":") || strings.Contains(d.Key, "write_mode") || strings.Contains(d.Message, "changedoc") ||
					strings.Contains(d.Message, "fast iteration") || strings.Contains(d.Message, "write isolation") {
					t.Errorf("%s/%s: %s", corpus.name, rel, d)
				}
			}
			if cfg == nil {
				return nil
			}
			for _, f := range cfg.IgnoredFeatures() {
				if isolationKey.MatchString(f + ":") {
					t.Errorf("%s/%s: %q is listed as ignored", corpus.name, rel, f)
				}
			}
			if strings.Contains(string(data), "write_mode: auto") && cfg.Orchestrator.Isolation.WriteMode != "auto" {
				t.Errorf("%s/%s: write_mode read as %q", corpus.name, rel, cfg.Orchestrator.Isolation.WriteMode)
			}
			return nil
		})
	}
	if found < 12 {
		t.Errorf("%d configs set the keys; v0.1.73 alone has 12 with write_mode", found)
	}
	t.Logf("%d upstream configs set write_mode, drift_conflict_policy, enable_changedoc or fast_iteration_mode", found)
}
