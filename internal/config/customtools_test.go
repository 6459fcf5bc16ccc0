package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCustomToolsDecodeUpstreamFormsAndCommandTools(t *testing.T) {
	src := `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      custom_tools:
        - name: ["two_num_tool"]
          category: "math"
          path: "massgen/tool/_basic/_two_num_tool.py"
          function: ["two_num_tool"]
        - function: [f, g]
          path: tools.py
          description: shared
          preset_args: [{k: 1}, {k: 2}]
          timeout: 30
        - name: search
          type: command
          command: [./search.sh, --fast]
          args: [--json]
          env: {MODE: "${MODE}"}
          cwd: tools
          description: Search the notes.
          parameters: {type: object, properties: {q: {type: string}}}
`
	cfg := parseOK(t, src, map[string]string{"MODE": "quick"})
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings:%s", dump(cfg.Warnings))
	}
	for _, f := range cfg.IgnoredFeatures() {
		if strings.Contains(f, "custom_tools") {
			t.Errorf("custom_tools is still listed as ignored: %q", cfg.IgnoredFeatures())
		}
	}
	want := []CustomTool{
		{Type: "python", Name: "two_num_tool", Category: "math", Path: "massgen/tool/_basic/_two_num_tool.py", Function: "two_num_tool", Line: 7},
		{Type: "python", Name: "f", Function: "f", Path: "tools.py", Description: "shared", PresetArgs: map[string]any{"k": 1}, TimeoutSeconds: 30, Line: 11},
		{Type: "python", Name: "g", Function: "g", Path: "tools.py", Description: "shared", PresetArgs: map[string]any{"k": 2}, TimeoutSeconds: 30, Line: 11},
		{Type: "command", Name: "search", Command: []string{"./search.sh", "--fast"}, Args: []string{"--json"}, Env: map[string]string{"MODE": "quick"},
			Cwd: "tools", Description: "Search the notes.", Line: 16,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
	}
	got := cfg.Agents[0].Backend.CustomTools
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CustomTools (-want +got):\n%s", diff)
	}
}

func TestCustomToolMistakesAreNamed(t *testing.T) {
	tests := []struct {
		name, tools, key, msg string
		sev                   Severity
	}{
		{"no function", "[{name: x, path: a.py}]", "custom_tools[0].function", "needs 'function'", Error},
		{"list of the wrong length", "[{function: [f, g], name: [a]}]", "custom_tools[0].name", "'name' lists 1 values for 2 functions", Error},
		{"a typo", "[{function: f, pth: a.py}]", "custom_tools[0].pth", "unknown key 'pth'", Warning},
		{"a command without command", "[{type: command, name: x}]", "custom_tools[0].command", "needs 'command'", Error},
		{"a command without name", "[{type: command, command: ls}]", "custom_tools[0].name", "needs 'name'", Error},
		{"an unknown type", "[{type: java, function: f}]", "custom_tools[0].type", "invalid custom tool type 'java'", Error},
		{"a workflow tool's name", "[{function: vote, category: builtin}]", "custom_tools[0].name", "would take the name of a workflow tool", Error},
		{"a repeated name", "[{function: f}, {function: g, name: f}]", "custom_tools[1].name", "two custom tools are named 'f'", Error},
		{"a name providers refuse", "[{function: f, name: 'has space'}]", "custom_tools[0].name", "invalid custom tool name", Error},
		{"not a list", "{function: f}", "custom_tools", "must be a list of tools", Error},
		{"a bad timeout", "[{function: f, timeout: 0}]", "custom_tools[0].timeout", "must be a positive number of seconds, got 0", Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      custom_tools: " + tt.tools + "\n"
			ds := diagnose(t, src, nil)
			d, ok := find(ds, "agents[0].backend."+tt.key, tt.sev)
			if !ok || !strings.Contains(d.Message, tt.msg) {
				t.Fatalf("want %s %q at %s, got:%s", tt.sev, tt.msg, tt.key, dump(ds))
			}
			if tt.name == "a typo" && !strings.Contains(d.Suggestion, "path") {
				t.Errorf("suggestion = %q, want path", d.Suggestion)
			}
		})
	}
}

func TestCustomToolNames(t *testing.T) {
	for _, tt := range []struct{ name, category, want string }{
		{"two_num_tool", "math", "custom_tool__two_num_tool"},
		{"custom_tool__x", "", "custom_tool__x"},
		{"read_file", "builtin", "read_file"},
	} {
		if got := (CustomTool{Name: tt.name, Category: tt.category}).ToolName(); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.name, tt.category, got, tt.want)
		}
	}
}
