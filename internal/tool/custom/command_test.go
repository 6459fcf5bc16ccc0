package custom

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/tool"
)

func TestCommandToolTakesJSONInAndGivesItsOutputBack(t *testing.T) {
	script := testdata(t, "tool.sh")
	spec := CommandSpec{Name: "custom_tool__sh", Description: "A shell tool.", Argv: []string{script}, Dir: filepath.Dir(script),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}
	tl := Command(spec)
	if d := tl.Def(); d.Name != "custom_tool__sh" || d.Description != "A shell tool." || d.Parameters["type"] != "object" {
		t.Errorf("def = %+v", d)
	}
	if got := tool.Invoke(t.Context(), tl, `{"q":"hi"}`, 0); !reflect.DeepEqual(got, (tool.Result{Content: `{"received": {"q":"hi"}, "cwd_has_tools_py": true}`})) {
		t.Errorf("got %+v", got)
	}
	got := tool.Invoke(t.Context(), tl, `{"q":"fail"}`, 0)
	if !got.IsError || got.Content != "custom tool custom_tool__sh failed (exit status 2); stderr: asked to fail" {
		t.Errorf("failing command: %+v", got)
	}
	spec.Timeout = 50 * time.Millisecond
	got = tool.Invoke(t.Context(), Command(spec), `{"q":"sleep"}`, 0)
	if !got.IsError || !strings.HasPrefix(got.Content, "custom tool custom_tool__sh did not finish within 50ms") {
		t.Errorf("slow command: %+v", got)
	}
	missing := Command(CommandSpec{Name: "custom_tool__x", Argv: []string{filepath.Join(t.TempDir(), "nothing")}})
	if got := tool.Invoke(t.Context(), missing, `{}`, 0); !got.IsError || !strings.Contains(got.Content, "could not run") {
		t.Errorf("missing executable: %+v", got)
	}
}

func TestCommandOutputIsUnquotedAndCapped(t *testing.T) {
	c := &capped{max: 8}
	_, _ = c.Write([]byte(`"a quoted string"`))
	if got := c.text(); got != "\"a quote\n[output truncated: 9 more bytes]" {
		t.Errorf("capped text = %q", got)
	}
	c = &capped{max: 100}
	_, _ = c.Write([]byte("\"line\\nbreak\"\n"))
	if got := c.text(); got != "line\nbreak" {
		t.Errorf("JSON string = %q", got)
	}
}
