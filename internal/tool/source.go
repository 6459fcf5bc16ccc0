package tool

import (
	"context"
	"fmt"
	"slices"
)

// Source supplies tools that are known only once something has started:
// the tools of an MCP server that is still starting in the background. A
// Set carries its sources unresolved, so building a team never waits for
// them; a turn resolves its set when its first request needs the
// definitions (Resolve), so start-up overlaps with everything before it.
type Source interface {
	// Tools waits until the tools are known or ctx ends. It is called by
	// every turn, so it must be cheap once resolved and safe to call
	// concurrently.
	Tools(ctx context.Context) ([]Tool, error)
}

// WithSources returns a new set that also draws tools from srcs once
// resolved; s is unchanged.
func (s *Set) WithSources(srcs ...Source) *Set {
	out, _ := NewSet(s.All()...) // s's names are already unique
	out.sources = append(s.sourceList(), srcs...)
	return out
}

// Resolve waits for the set's sources and returns a set of its tools plus
// theirs, with no sources left. A set without sources is returned as it is.
// A source that fails (a server that did not start) fails the resolution
// with its error, which says why.
func (s *Set) Resolve(ctx context.Context) (*Set, error) {
	if s == nil || len(s.sources) == 0 {
		return s, nil
	}
	all := s.All()
	for _, src := range s.sources {
		tools, err := src.Tools(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, tools...)
	}
	out, err := NewSet(all...)
	if err != nil {
		return nil, fmt.Errorf("resolving tools: %w", err)
	}
	return out, nil
}

// Pending reports whether the set has sources not yet resolved.
func (s *Set) Pending() bool { return s != nil && len(s.sources) > 0 }

func (s *Set) sourceList() []Source {
	if s == nil {
		return nil
	}
	return slices.Clone(s.sources)
}
