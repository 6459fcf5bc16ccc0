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
	var tools []Tool
	for _, t := range s.All() {
		tools = append(tools, blockIf(t, block, refusal))
	}
	out, _ := NewSet(tools...) // same names as s
	for _, src := range s.sourceList() {
		out.sources = append(out.sources, blockingSource{src, block, refusal})
	}
	return out
}

func blockIf(t Tool, block func(Tool) bool, refusal func(Tool) string) Tool {
	if !block(t) {
		return t
	}
	return blocked{def: t, msg: refusal(t)}
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

type blockingSource struct {
	src     Source
	block   func(Tool) bool
	refusal func(Tool) string
}

func (b blockingSource) Tools(ctx context.Context) ([]Tool, error) {
	ts, err := b.src.Tools(ctx)
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = blockIf(t, b.block, b.refusal)
	}
	return out, err
}
