package config

import (
	"slices"
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
