package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCodeToolsKeysDecodeWithoutAWarning(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      cwd: ws
      enable_mcp_command_line: true
      enable_code_based_tools: true
      shared_tools_directory: shared_tools
      direct_mcp_servers: [notes]
      exclude_file_operation_mcps: true
`, nil)
	for _, w := range cfg.Warnings {
		t.Errorf("warning: %s", w)
	}
	got := cfg.Agents[0].Backend.CodeTools()
	want := CodeTools{Enabled: true, SharedDir: "shared_tools", Direct: []string{"notes"}, ExcludeFileOps: true}
	if got.Enabled != want.Enabled || got.SharedDir != want.SharedDir || !slices.Equal(got.Direct, want.Direct) ||
		got.ExcludeFileOps != want.ExcludeFileOps {
		t.Errorf("CodeTools = %+v, want %+v", got, want)
	}
	if f := cfg.IgnoredFeatures(); len(f) != 0 {
		t.Errorf("IgnoredFeatures = %q", f)
	}
}

func TestCodeToolsKeysOfTheWrongTypeFail(t *testing.T) {
	for key, val := range map[string]string{"enable_code_based_tools": "'yes'", "direct_mcp_servers": "notes",
		"exclude_file_operation_mcps": "[x]", "shared_tools_directory": "[x]"} {
		ds := diagnose(t, "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, "+key+": "+val+"}\n", nil)
		if _, ok := find(ds, "agents[0].backend."+key, Error); !ok {
			t.Errorf("%s: %s loads:%s", key, val, dump(ds))
		}
	}
}

// Every config of both corpora that turns code-based tools on loads with
// no warning about the code-based tools keys, and CodeTools as the file
// says.
func TestCorporaCodeToolsConfigsLoadWithoutIgnoredWarning(t *testing.T) {
	keys := []string{"enable_code_based_tools", "shared_tools_directory", "direct_mcp_servers", "exclude_file_operation_mcps"}
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
			if !strings.Contains(string(data), "enable_code_based_tools: true") {
				return nil
			}
			n++
			cfg, diags := parse(data, path, envOf(nil))
			if cfg == nil {
				t.Errorf("%s: %v", path, diags.Errors())
				return nil
			}
			on := false
			for _, a := range cfg.Agents {
				on = on || a.Backend.CodeTools().Enabled
			}
			if !on {
				t.Errorf("%s: no agent has code-based tools after decoding", path)
			}
			for _, w := range cfg.Warnings {
				for _, k := range keys {
					if strings.HasSuffix(w.Key, "."+k) {
						t.Errorf("%s: %s", path, w)
					}
				}
			}
			for _, f := range cfg.IgnoredFeatures() {
				for _, k := range keys {
					if strings.HasPrefix(f, k) {
						t.Errorf("%s: %s is listed as ignored", path, f)
					}
				}
			}
			return nil
		})
		t.Logf("%s: %d configs turn code-based tools on", corpus.name, n)
		total += n
	}
	if total == 0 {
		t.Error("no config of either corpus turns code-based tools on")
	}
}
