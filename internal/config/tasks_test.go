package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The task planning keys of orchestrator.coordination are read into
// Tasks, draw no "ignored" warning and are not in IgnoredFeatures; a
// max_tasks_per_plan below 1 is an error at its line.
func TestTaskPlanningKeysAreDecodedNotIgnored(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
    max_tasks_per_plan: 7
`, nil)
	if want := (TaskPlanning{Enabled: true, Filesystem: true, MaxTasks: 7}); cfg.Orchestrator.Tasks != want {
		t.Errorf("Tasks = %+v, want %+v", cfg.Orchestrator.Tasks, want)
	}
	if len(cfg.Warnings) != 0 || len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("warnings:%s\nignored: %q", dump(cfg.Warnings), cfg.IgnoredFeatures())
	}
	for _, k := range []string{"enable_agent_task_planning", "task_planning_filesystem_mode", "max_tasks_per_plan"} {
		if _, ignored := ignoredFeature(k); ignored || !slices.Contains(implementedKeys, k) {
			t.Errorf("%s: ignored %v, implemented %v", k, ignored, slices.Contains(implementedKeys, k))
		}
	}
	for _, bad := range []string{"0", "-3", "ten"} {
		_, err := Parse([]byte(oneAgent+"orchestrator:\n  coordination:\n    max_tasks_per_plan: "+bad+"\n"), "c.yaml", func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "max_tasks_per_plan") || !strings.Contains(err.Error(), "c.yaml:") {
			t.Errorf("max_tasks_per_plan: %s: err = %v", bad, err)
		}
	}
}

// Every config of both corpora that turns task planning on loads with no
// warning about it, and with Tasks as the file says.
func TestCorporaTaskPlanningConfigsLoadWithoutIgnoredWarning(t *testing.T) {
	total := 0
	for _, corpus := range referenceCorpora {
		if _, err := os.Stat(corpus.dir); err != nil {
			t.Skipf("reference configs not found at %s (they live beside the project): %v", corpus.dir, err)
		}
		n := 0
		_ = filepath.WalkDir(corpus.dir, func(path string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || filepath.Ext(path) != ".yaml" {
				return err
			}
			data, _ := os.ReadFile(path)
			if !strings.Contains(string(data), "\n    enable_agent_task_planning: true") &&
				!strings.Contains(string(data), "\n      enable_agent_task_planning: true") {
				return nil
			}
			n++
			cfg, diags := parse(data, path, envOf(nil))
			if cfg == nil {
				t.Errorf("%s: %v", path, diags.Errors())
				return nil
			}
			if !cfg.Orchestrator.Tasks.Enabled {
				t.Errorf("%s: task planning not enabled after decoding", path)
			}
			if fs := strings.Contains(string(data), "task_planning_filesystem_mode: true"); fs != cfg.Orchestrator.Tasks.Filesystem {
				t.Errorf("%s: Filesystem = %v, file says %v", path, cfg.Orchestrator.Tasks.Filesystem, fs)
			}
			for _, w := range cfg.Warnings {
				if strings.Contains(w.Message, "task planning") || strings.Contains(w.Key, "task_planning") || strings.Contains(w.Key, "max_tasks") {
					t.Errorf("%s: %s", path, w)
				}
			}
			return nil
		})
		t.Logf("%s: %d configs turn task planning on", corpus.name, n)
		total += n
	}
	if total < 33 {
		t.Errorf("%d configs turn task planning on, want at least upstream's 33 of v0.1.73", total)
	}
}
