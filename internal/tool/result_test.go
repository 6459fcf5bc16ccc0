package tool

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

func bigTool(n int) Tool {
	return Func(llm.ToolDef{Name: "mcp__big__get"}, func(context.Context, json.RawMessage) (string, error) {
		return strings.Repeat(strings.Repeat("x", 99)+"\n", n/100), nil
	})
}

// Issue 18: a 5 MB result (a Python custom tool's had no bound at all)
// reaches the model cut to MaxResult, with a note that says how much was
// cut and how to get the rest; every result passes through Invoke.
func TestInvokeCutsAnOversizedResultWithANote(t *testing.T) {
	res := Invoke(t.Context(), bigTool(5<<20), "{}", 0)
	body, note, ok := strings.Cut(res.Content, "[result truncated: ")
	if !ok {
		t.Fatalf("a 5 MB result has no note: %d bytes", len(res.Content))
	}
	if len(res.Content) > MaxResult {
		t.Errorf("the cut result with its note is %d bytes, over MaxResult", len(res.Content))
	}
	if len(body) > MaxResult || len(body) < MaxResult*3/4 || !strings.HasSuffix(body, "x\n") {
		t.Errorf("kept %d bytes, want up to %d, cut at a line's end", len(body), MaxResult)
	}
	for _, want := range []string{"showing the first 127.", "of 5.0 MiB", "MiB cut", "To see the rest, call the tool again asking for less"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if small := Invoke(t.Context(), bigTool(MaxResult), "{}", 0); strings.Contains(small.Content, "truncated") {
		t.Errorf("a result of exactly MaxResult bytes was cut")
	}
}

// A cut never splits a character.
func TestCutKeepsWholeRunes(t *testing.T) {
	r := Cut(Result{Content: strings.Repeat("é", MaxResult)}, "")
	body, _, _ := strings.Cut(r.Content, "\n[result truncated")
	if !strings.HasPrefix(r.Content, "é") || strings.ToValidUTF8(body, "?") != body {
		t.Errorf("the cut split a rune")
	}
}

type effectsTool struct{ Tool }

func (effectsTool) ReadOnly() bool    { return true }
func (effectsTool) Destructive() bool { return false }

// With a workspace, the whole result is kept in a file the note names,
// which the agent's file tools can read in parts; a tool's declared
// effects survive the wrapping (planning mode and the MCP guard use them).
func TestKeepWholeWritesTheWholeResultToTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	keep := KeepWhole(dir)
	wrapped := keep(effectsTool{bigTool(5 << 20)})
	if e, ok := wrapped.(Effects); !ok || !e.ReadOnly() {
		t.Errorf("the wrapped tool lost its effects")
	}
	if _, ok := keep(bigTool(10)).(Effects); ok {
		t.Errorf("a tool without effects gained some")
	}
	res := Invoke(t.Context(), wrapped, "{}", 0)
	_, note, ok := strings.Cut(res.Content, "[result truncated: ")
	if !ok {
		t.Fatalf("no note in %d bytes", len(res.Content))
	}
	_, path, ok := strings.Cut(note, "read the whole result from ")
	path, _, _ = strings.Cut(path, " in your workspace")
	if !ok || !strings.HasPrefix(path, dir) {
		t.Fatalf("note %q does not name a file in the workspace %s", note, dir)
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) != 5<<20/100*100 {
		t.Errorf("kept file: %d bytes, %v; want the whole result", len(data), err)
	}
	if small := Invoke(t.Context(), keep(bigTool(100)), "{}", 0); small.Content != strings.Repeat("x", 99)+"\n" {
		t.Errorf("a small result changed: %q", small.Content)
	}
}
