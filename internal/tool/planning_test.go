package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

type effectTool struct {
	Tool
	ro bool
}

func (e effectTool) ReadOnly() bool    { return e.ro }
func (e effectTool) Destructive() bool { return !e.ro }

type staticSource []Tool

func (s staticSource) Tools(context.Context) ([]Tool, error) { return s, nil }

func TestBlockingRefusesWithoutRunning(t *testing.T) {
	ran := map[string]int{}
	mk := func(name string) Tool {
		return Func(llm.ToolDef{Name: name}, func(context.Context, json.RawMessage) (string, error) {
			ran[name]++
			return "ran " + name, nil
		})
	}
	set, err := NewSet(mk("read"), mk("write"))
	if err != nil {
		t.Fatal(err)
	}
	set = set.WithSources(staticSource{effectTool{mk("mcp_read"), true}, effectTool{mk("mcp_write"), false}})
	block := func(t Tool) bool {
		if e, ok := t.(Effects); ok {
			return !e.ReadOnly()
		}
		return t.Def().Name == "write"
	}
	planned, err := set.Blocking(block, func(t Tool) string { return "blocked " + t.Def().Name }).Resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(planned.Names(), ","); got != "read,write,mcp_read,mcp_write" {
		t.Fatalf("names %s: the model must still see every tool", got)
	}
	for name, want := range map[string]Result{"read": {Content: "ran read"}, "write": {Content: "blocked write", IsError: true},
		"mcp_read": {Content: "ran mcp_read"}, "mcp_write": {Content: "blocked mcp_write", IsError: true}} {
		tl, _ := planned.Lookup(name)
		if got := tl.Call(t.Context(), json.RawMessage("{}")); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if ran["write"] != 0 || ran["mcp_write"] != 0 || ran["read"] != 1 || ran["mcp_read"] != 1 {
		t.Errorf("runs %v", ran)
	}
	// The original set is unchanged: the winner presents with it.
	orig, _ := set.Resolve(t.Context())
	w, _ := orig.Lookup("mcp_write")
	if got := w.Call(t.Context(), json.RawMessage("{}")); got.IsError {
		t.Errorf("the original set was changed: %+v", got)
	}
}
