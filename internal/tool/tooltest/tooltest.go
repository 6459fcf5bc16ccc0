// Package tooltest holds small deterministic tools for tests of the tool
// loop: real tools (they compute their results from their arguments), so a
// test can check that a model was sent the right result.
package tooltest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Add is add{a: number, b: number}: it returns the sum as text ("5"),
// reporting progress (1 of 1, "adding") as it runs, as an MCP tool may.
func Add() tool.Tool {
	return tool.Func(llm.ToolDef{
		Name:        "add",
		Description: "Add two numbers.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"a": map[string]any{"type": "number"},
				"b": map[string]any{"type": "number"},
			},
			"required": []string{"a", "b"},
		},
	}, func(ctx context.Context, raw json.RawMessage) (string, error) {
		tool.ReportProgress(ctx, tool.Progress{Tool: "add", Progress: 1, Total: 1, Message: "adding"})
		var args struct{ A, B *float64 }
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("add: %v", err)
		}
		if args.A == nil || args.B == nil {
			return "", fmt.Errorf("add needs both a and b")
		}
		return strconv.FormatFloat(*args.A+*args.B, 'f', -1, 64), nil
	})
}

// Capitals is what Lookup knows.
var Capitals = map[string]string{"France": "Paris", "Italy": "Rome", "Japan": "Tokyo"}

// Lookup is lookup{country: string}: it returns "The capital of X is Y.",
// or an error result for a country it does not know.
func Lookup() tool.Tool {
	return tool.Func(llm.ToolDef{
		Name:        "lookup",
		Description: "Look up the capital of a country.",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"country": map[string]any{"type": "string"}},
			"required":   []string{"country"},
		},
	}, func(_ context.Context, raw json.RawMessage) (string, error) {
		var args struct{ Country string }
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("lookup: %v", err)
		}
		c, ok := Capitals[args.Country]
		if !ok {
			return "", fmt.Errorf("no capital known for %q", args.Country)
		}
		return fmt.Sprintf("The capital of %s is %s.", args.Country, c), nil
	})
}

// Set is a set of Add and Lookup.
func Set() *tool.Set {
	s, err := tool.NewSet(Add(), Lookup())
	if err != nil {
		panic(err) // two fixed, distinct names
	}
	return s
}
