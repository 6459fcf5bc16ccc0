package tool

import (
	"context"
	"encoding/json"

	"github.com/massgen/massgen/internal/llm"
)

// Effects is implemented by tools that declare what they do to the world,
// as MCP tools do with their annotations (readOnlyHint, destructiveHint).
type Effects interface {
	// ReadOnly reports that the tool changes nothing; Destructive, that a
	// change may destroy or overwrite (meaningful only when not ReadOnly).
	ReadOnly() bool
	Destructive() bool
}

// Blocking returns a set with the tools of s, where every tool block says
// yes to is replaced by one with the same definition (the model still
// sees it, and may plan with it) whose calls refuse with refusal(tool).
// Tools of sources are decided once resolved. s is unchanged.
func (s *Set) Blocking(block func(Tool) bool, refusal func(Tool) string) *Set {
	return s.Map(func(t Tool) Tool {
		if !block(t) {
			return t
		}
		return blocked{def: t, msg: refusal(t)}
	})
}

// Map returns a set with f(t) for every tool t of s, those of its sources
// once resolved; f must keep each tool's name. s is unchanged.
func (s *Set) Map(f func(Tool) Tool) *Set {
	var tools []Tool
	for _, t := range s.All() {
		tools = append(tools, f(t))
	}
	out, _ := NewSet(tools...) // same names as s
	for _, src := range s.sourceList() {
		out.sources = append(out.sources, mappedSource{src, f})
	}
	return out
}

// blocked is a tool that refuses every call: planning mode.
type blocked struct {
	def Tool
	msg string
}

func (b blocked) Def() llm.ToolDef { return b.def.Def() }
func (b blocked) Call(context.Context, json.RawMessage) Result {
	return Result{Content: b.msg, IsError: true}
}

type mappedSource struct {
	src Source
	f   func(Tool) Tool
}

func (m mappedSource) Tools(ctx context.Context) ([]Tool, error) {
	ts, err := m.src.Tools(ctx)
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = m.f(t)
	}
	return out, err
}
