package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Prefix starts every MCP tool's name: mcp__<server>__<tool>.
const Prefix = "mcp__"

// maxName is the longest tool name every provider accepts (OpenAI's 64).
const maxName = 64

// ToolName is the name a server's tool is offered under. The server's
// raw name is kept as it is when the providers accept it ([A-Za-z0-9_-]);
// other characters become '_'. A name that had to change, or is too long,
// gets a short hash of the raw name, so two raw names never meet in one
// offered name. Upstream strips prefixes and '__' instead, which makes
// distinct tools collide (behaviour §12.10); here a call is routed by a
// table, never by parsing the name back, so '__' in a tool name is fine.
func ToolName(server, raw string) string {
	clean := sanitize(raw)
	name := Prefix + server + "__" + clean
	if clean == raw && len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(raw))
	suffix := "_" + hex.EncodeToString(sum[:])[:6]
	if len(name)+len(suffix) > maxName {
		name = name[:max(len(Prefix+server+"__")+1, maxName-len(suffix))]
	}
	return name + suffix
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// filter is the allowed/excluded rule of one agent on one server:
// exclude = the agent's ∪ the server's; allowed = the server's if set,
// else the agent's (upstream's rule). An entry matches a tool by its raw
// name or its offered name (upstream compares raw names only, so the
// prefixed names its own docs write never match: §12.10).
type filter struct{ allowed, exclude []string }

func newFilter(server Server, agentAllowed, agentExclude []string) filter {
	f := filter{allowed: agentAllowed, exclude: append(slices.Clone(agentExclude), server.Exclude...)}
	if len(server.Allowed) > 0 {
		f.allowed = server.Allowed
	}
	return f
}

// matches reports whether a filter entry names a tool.
func matches(entry, server, raw string) bool {
	return entry == raw || entry == ToolName(server, raw) || entry == Prefix+server+"__"+raw
}

// keep reports whether a tool passes the filter.
func (f filter) keep(server, raw string) bool {
	hit := func(e string) bool { return matches(e, server, raw) }
	if slices.ContainsFunc(f.exclude, hit) {
		return false
	}
	return len(f.allowed) == 0 || slices.ContainsFunc(f.allowed, hit)
}

// serverTools is one server's raw tool names, for unmatched.
type serverTools struct {
	server string
	raws   []string
}

// unmatched names the entries of a filter list that match no tool of the
// given servers, with the tools there are: a filter that hides nothing
// (or everything) by a typo must not pass silently.
func unmatched(list []string, from string, among []serverTools) []string {
	var out []string
	for _, e := range list {
		var names []string
		found := false
		for _, st := range among {
			for _, r := range st.raws {
				found = found || matches(e, st.server, r)
				names = append(names, ToolName(st.server, r))
			}
		}
		if !found {
			have := strings.Join(names, ", ")
			if have == "" {
				have = "none"
			}
			out = append(out, fmt.Sprintf("%s entry %q matches no MCP tool; the tools are: %s", from, e, have))
		}
	}
	return out
}
