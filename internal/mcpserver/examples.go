package mcpserver

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/examples"
)

// Example is one shipped example config, as massgen_examples lists it.
type Example struct {
	Name        string `json:"name" jsonschema:"what massgen_run's config takes"`
	Description string `json:"description" jsonschema:"the config's opening comment"`
	// Dir is true for a file of the server's config directory.
	Dir bool `json:"config_dir,omitempty" jsonschema:"true for a config of the server's config directory, false for a shipped example"`
}

// ExamplesOutput is massgen_examples' structured result.
type ExamplesOutput struct {
	Examples []Example `json:"examples"`
}

var examplesTool = &mcp.Tool{
	Name:        "massgen_examples",
	Title:       "List massgen's example teams",
	Description: "Lists the configs massgen_run's config may name: the examples shipped with massgen, and the files of the server's config directory, if it has one. Examples starting with sim_ run on the built-in simulator, without any API key.",
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
}

func (s *Server) listExamples(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *ExamplesOutput, error) {
	out := &ExamplesOutput{Examples: s.dirConfigs()}
	for _, n := range examples.Names() {
		_, data, _ := examples.Find(n)
		out.Examples = append(out.Examples, Example{Name: n, Description: describe(string(data))})
	}
	var text strings.Builder
	for _, ex := range out.Examples {
		text.WriteString(ex.Name)
		if ex.Dir {
			text.WriteString(" (config directory)")
		}
		if ex.Description != "" {
			text.WriteString(": " + ex.Description)
		}
		text.WriteString("\n")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}}, out, nil
}

// dirConfigs lists the *.yaml and *.yml files at the top of the config
// directory, read through an os.Root (a link out of it is left out).
func (s *Server) dirConfigs() []Example {
	out := []Example{}
	if s.o.ConfigDir == "" {
		return out
	}
	root, err := os.OpenRoot(s.o.ConfigDir)
	if err != nil {
		return out
	}
	defer root.Close()
	entries, _ := fs.ReadDir(root.FS(), ".")
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if ext != ".yaml" && ext != ".yml" {
			continue
		}
		st, err := root.Stat(e.Name())
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxInlineConfig {
			continue
		}
		data, _ := root.ReadFile(e.Name())
		out = append(out, Example{Name: strings.TrimSuffix(e.Name(), ext), Description: describe(string(data)), Dir: true})
	}
	return out
}

// describe is the first line of a config's opening comment.
func describe(yaml string) string {
	line, _, _ := strings.Cut(yaml, "\n")
	if d, ok := strings.CutPrefix(line, "#"); ok {
		return strings.TrimSpace(d)
	}
	return ""
}
