package tool

import (
	"fmt"
	"slices"

	"github.com/massgen/massgen/internal/llm"
)

// Set is one agent's tools, in the order they are offered. Names are
// unique: a second tool with a name already taken is refused, because the
// model could not tell them apart. The zero value and nil are empty sets.
// A Set is not changed after it is built, so a turn may share it.
type Set struct {
	tools   []Tool
	index   map[string]int
	sources []Source // resolved by Resolve (source.go)
}

// NewSet builds a set, refusing an empty or repeated name.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{index: make(map[string]int, len(tools))}
	for _, t := range tools {
		name := t.Def().Name
		if name == "" {
			return nil, fmt.Errorf("tool %d has no name", len(s.tools)+1)
		}
		if _, dup := s.index[name]; dup {
			return nil, fmt.Errorf("two tools are named %q", name)
		}
		s.index[name] = len(s.tools)
		s.tools = append(s.tools, t)
	}
	return s, nil
}

// With returns a new set holding more, then the tools of s; s is unchanged.
// Sources not yet resolved are kept.
func (s *Set) With(more ...Tool) (*Set, error) {
	out, err := NewSet(append(slices.Clone(more), s.All()...)...)
	if err != nil {
		return nil, err
	}
	out.sources = s.sourceList()
	return out, nil
}

// Lookup finds a tool by name.
func (s *Set) Lookup(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return s.tools[i], true
}

// All returns the tools in order.
func (s *Set) All() []Tool {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tools)
}

// Len is the number of tools.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// Names lists the tool names in order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Def().Name
	}
	return out
}

// Defs are the definitions to send with a request, in order.
func (s *Set) Defs() []llm.ToolDef {
	if s == nil {
		return nil
	}
	out := make([]llm.ToolDef, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Def()
	}
	return out
}
