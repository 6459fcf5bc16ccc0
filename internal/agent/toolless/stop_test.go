package toolless

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// A model that cannot call tools can stop in decomposition mode: the
// schema and the instructions offer stop (never vote), the JSON and the
// STOP:/STATUS: lines parse back to it, and STATUS: lines mean nothing
// where stop is not offered.
func TestStopWithoutTools(t *testing.T) {
	o, ok := offerOf([]llm.ToolDef{tool.NewAnswer(), tool.Stop()})
	if !ok || !o.stop || o.vote {
		t.Fatalf("offer %+v ok=%v", o, ok)
	}
	s := o.schema()["json_schema"].(map[string]any)["schema"].(map[string]any)
	choices, _ := s["oneOf"].([]any)
	if len(choices) != 2 || choices[0].(map[string]any)["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]string)[0] != coord.ToolStop {
		t.Fatalf("schema %v", s)
	}
	for _, mode := range []Mode{JSONSchema, Text} {
		if in := o.instructions(mode); !strings.Contains(in, "when your subtask is done") || strings.Contains(in, "vote") {
			t.Errorf("%s instructions: %s", mode, in)
		}
	}
	for _, c := range []struct{ text, summary, status string }{
		{`{"action": "stop", "summary": "parser done", "status": "complete"}`, "parser done", "complete"},
		{"Checked it all.\nSTOP: parser done, AST shared\nSTATUS: blocked", "parser done, AST shared", "blocked"},
	} {
		name, args, ok := parse(c.text, o)
		if !ok || name != coord.ToolStop || args["summary"] != c.summary || args["status"] != c.status {
			t.Errorf("parse(%q) = %s %v ok=%v", c.text, name, args, ok)
		}
	}
	call := llm.ToolCall{Name: coord.ToolStop, Arguments: `{"summary":"done","status":"complete"}`}
	for _, mode := range []Mode{JSONSchema, Text} {
		name, args, ok := parse(render(mode, call), o)
		var want map[string]any
		_ = json.Unmarshal([]byte(call.Arguments), &want)
		if !ok || name != coord.ToolStop || args["summary"] != want["summary"] || args["status"] != want["status"] {
			t.Errorf("%s: %q parsed as %s %v", mode, render(mode, call), name, args)
		}
	}
	// In voting mode a "Status:" line is part of the answer.
	name, args, _ := parse("ANSWER: the build\nStatus: green", offer{})
	if name != coord.ToolNewAnswer || args["content"] != "the build\nStatus: green" {
		t.Errorf("voting mode: %s %v", name, args)
	}
}
