package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/examples"
)

// Example is one shipped example config, as massgen_examples lists it.
type Example struct {
	Name        string `json:"name" jsonschema:"what massgen_run's config takes"`
	Description string `json:"description" jsonschema:"the config's opening comment"`
}

// ExamplesOutput is massgen_examples' structured result.
type ExamplesOutput struct {
	Examples []Example `json:"examples"`
}

var examplesTool = &mcp.Tool{
	Name:        "massgen_examples",
	Title:       "List massgen's example teams",
	Description: "Lists the example configs shipped with massgen, each usable as massgen_run's config. Names starting with sim_ run on the built-in simulator, without any API key.",
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
}

func listExamples(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *ExamplesOutput, error) {
	out := &ExamplesOutput{Examples: []Example{}}
	var text strings.Builder
	for _, n := range examples.Names() {
		_, data, _ := examples.Find(n)
		ex := Example{Name: n, Description: describe(string(data))}
		out.Examples = append(out.Examples, ex)
		text.WriteString(n)
		if ex.Description != "" {
			text.WriteString(": " + ex.Description)
		}
		text.WriteString("\n")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}}, out, nil
}

// describe is the first line of a config's opening comment.
func describe(yaml string) string {
	line, _, _ := strings.Cut(yaml, "\n")
	if d, ok := strings.CutPrefix(line, "#"); ok {
		return strings.TrimSpace(d)
	}
	return ""
}
