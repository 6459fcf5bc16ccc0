package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The decoder works on this small tree rather than on goccy's AST: it
// resolves anchors, aliases, merge keys and tags once, keeps a position on
// every key and value, and gives the rest of the package five cases to
// handle instead of twenty node types.

type kind int

const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindMap
	kindSeq
)

type node struct {
	kind  kind
	pos   pos
	b     bool
	i     int64
	f     float64
	s     string
	pairs []*pair // kindMap, in source order
	items []*node // kindSeq
	// expanded marks a string whose ${VAR}s were already replaced; an alias
	// shares its anchor's node, which must not be expanded twice.
	expanded bool
	// unset names the variables of a ${VAR} reference in this string that
	// were unset and had no default.
	unset []string
}

type pair struct {
	key    string
	keyPos pos
	val    *node
}

// get returns the pair for key in a map node, or nil.
func (n *node) get(key string) *pair {
	if n == nil || n.kind != kindMap {
		return nil
	}
	for _, p := range n.pairs {
		if p.key == key {
			return p
		}
	}
	return nil
}

func (n *node) isNull() bool { return n == nil || n.kind == kindNull }

// Limits that keep hostile input cheap: deep nesting would exhaust the stack
// and alias chains ("billion laughs") would multiply the tree.
const (
	maxNestingDepth = 200
	maxTreeNodes    = 200_000
)

// converter turns goccy's AST into the tree, collecting diagnostics.
type converter struct {
	anchors map[string]*node
	count   int // nodes visited, aliases counted at full size
	warn    func(p pos, key, msg, sugg string)
	fail    func(p pos, msg string)
	failed  bool
}

func tokPos(tk *token.Token) pos {
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// nodePos finds where a node starts. A block mapping's own token is its
// first ':'; the first key is where a reader would look.
func nodePos(n ast.Node) pos {
	switch v := n.(type) {
	case nil:
		return pos{}
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 && v.Values[0].Key != nil {
			return nodePos(v.Values[0].Key)
		}
	case *ast.MappingValueNode:
		if v.Key != nil {
			return nodePos(v.Key)
		}
	case *ast.AnchorNode:
		return tokPos(v.Start)
	}
	return tokPos(n.GetToken())
}

// convert builds the tree for n; path is its key path, used only to name
// duplicate keys in warnings.
func (c *converter) convert(n ast.Node, depth int, path string) *node {
	if c.failed {
		return &node{kind: kindNull}
	}
	c.count++
	if depth > maxNestingDepth || c.count > maxTreeNodes {
		c.fail(nodePos(n), "document is nested too deeply or too large (aliases included)")
		return &node{kind: kindNull}
	}
	p := nodePos(n)
	switch v := n.(type) {
	case nil:
		return &node{kind: kindNull}
	case *ast.NullNode:
		return &node{kind: kindNull, pos: p}
	case *ast.BoolNode:
		return &node{kind: kindBool, pos: p, b: v.Value}
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return &node{kind: kindInt, pos: p, i: x}
		case uint64:
			if x <= math.MaxInt64 {
				return &node{kind: kindInt, pos: p, i: int64(x)}
			}
			return &node{kind: kindFloat, pos: p, f: float64(x)}
		}
		return &node{kind: kindString, pos: p, s: v.GetToken().Value}
	case *ast.FloatNode:
		return &node{kind: kindFloat, pos: p, f: v.Value}
	case *ast.InfinityNode:
		return &node{kind: kindFloat, pos: p, f: v.Value}
	case *ast.NanNode:
		return &node{kind: kindFloat, pos: p, f: math.NaN()}
	case *ast.StringNode:
		// PyYAML (YAML 1.1) reads plain yes/no/on/off as booleans and
		// upstream configs were written against it; goccy (YAML 1.2) does not.
		if v.Token != nil && v.Token.Type == token.StringType {
			switch v.Value {
			case "yes", "Yes", "YES", "on", "On", "ON":
				return &node{kind: kindBool, pos: p, b: true}
			case "no", "No", "NO", "off", "Off", "OFF":
				return &node{kind: kindBool, pos: p, b: false}
			}
		}
		return &node{kind: kindString, pos: p, s: v.Value}
	case *ast.LiteralNode:
		s := ""
		if v.Value != nil {
			s = v.Value.Value
		}
		return &node{kind: kindString, pos: p, s: s}
	case *ast.MappingNode:
		return c.mapping(v.Values, p, depth, path)
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{v}, p, depth, path)
	case *ast.SequenceNode:
		out := &node{kind: kindSeq, pos: p}
		for i, item := range v.Values {
			out.items = append(out.items, c.convert(item, depth+1, index(path, i)))
		}
		return out
	case *ast.AnchorNode:
		val := c.convert(v.Value, depth+1, path)
		if v.Name != nil {
			c.anchors[v.Name.GetToken().Value] = val
		}
		return val
	case *ast.AliasNode:
		name := ""
		if v.Value != nil && v.Value.GetToken() != nil {
			name = v.Value.GetToken().Value
		}
		target, ok := c.anchors[name]
		if !ok {
			c.fail(p, fmt.Sprintf("unknown alias '*%s' (no anchor '&%s' before it)", name, name))
			return &node{kind: kindNull, pos: p}
		}
		c.count += size(target, maxTreeNodes-c.count+1)
		if c.count > maxTreeNodes {
			c.fail(p, "document is too large once aliases are expanded")
		}
		return target
	case *ast.TagNode:
		return c.tagged(v, depth, path)
	}
	c.fail(p, fmt.Sprintf("unsupported YAML construct (%s)", n.Type()))
	return &node{kind: kindNull, pos: p}
}

// tagged applies the standard scalar tags people actually write (!!str to
// keep "0123" a string, !!int/!!float/!!bool); other tags are ignored, as
// they carry no meaning for a config.
func (c *converter) tagged(v *ast.TagNode, depth int, path string) *node {
	val := c.convert(v.Value, depth+1, path)
	tag := ""
	if v.Start != nil {
		tag = v.Start.Value
	}
	src := ""
	if v.Value != nil && v.Value.GetToken() != nil {
		src = v.Value.GetToken().Value
	}
	scalar := val.kind != kindMap && val.kind != kindSeq
	switch tag {
	case "!!str", "tag:yaml.org,2002:str":
		if scalar {
			return &node{kind: kindString, pos: val.pos, s: src}
		}
	case "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(src, "_", ""), 0, 64); err == nil && scalar {
			return &node{kind: kindInt, pos: val.pos, i: i}
		}
	case "!!float":
		if f, err := strconv.ParseFloat(src, 64); err == nil && scalar {
			return &node{kind: kindFloat, pos: val.pos, f: f}
		}
	case "!!bool":
		if b, err := strconv.ParseBool(src); err == nil && scalar {
			return &node{kind: kindBool, pos: val.pos, b: b}
		}
	}
	return val
}

// mapping builds a map node. Duplicate keys keep the last value, as PyYAML
// does, with a warning because it is almost always a mistake. Merge keys
// (`<<: *base`) add the merged map's keys that the map does not set itself.
func (c *converter) mapping(values []*ast.MappingValueNode, p pos, depth int, path string) *node {
	out := &node{kind: kindMap, pos: p}
	var merged []*pair
	for _, mv := range values {
		if mv == nil {
			continue
		}
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); isMerge {
			src := c.convert(mv.Value, depth+1, path)
			for _, m := range mergeSources(src) {
				merged = append(merged, m.pairs...)
			}
			continue
		}
		kn := c.convert(mv.Key, depth+1, path)
		key, ok := keyString(kn)
		if !ok {
			c.fail(kn.pos, "map keys must be plain values, not maps or lists")
			continue
		}
		val := c.convert(mv.Value, depth+1, join(path, key))
		if val.pos == (pos{}) {
			val.pos = kn.pos // an empty value (`key:`) has no token of its own
		}
		np := &pair{key: key, keyPos: kn.pos, val: val}
		if prev := out.get(key); prev != nil {
			c.warn(kn.pos, join(path, key), fmt.Sprintf("duplicate key '%s' (first at line %d); the last value is used", key, prev.keyPos.line), "")
			*prev = *np
			continue
		}
		out.pairs = append(out.pairs, np)
	}
	for _, m := range merged {
		if out.get(m.key) == nil {
			out.pairs = append(out.pairs, m)
		}
	}
	return out
}

// mergeSources lists the maps a merge key refers to; in a list, earlier maps
// take precedence, which appending in order and keeping the first achieves.
func mergeSources(n *node) []*node {
	switch n.kind {
	case kindMap:
		return []*node{n}
	case kindSeq:
		var out []*node
		for _, it := range n.items {
			if it.kind == kindMap {
				out = append(out, it)
			}
		}
		return out
	}
	return nil
}

func keyString(n *node) (string, bool) {
	switch n.kind {
	case kindString:
		return n.s, true
	case kindNull:
		return "null", true
	case kindBool, kindInt, kindFloat:
		return scalarText(n), true
	}
	return "", false
}

func scalarText(n *node) string {
	switch n.kind {
	case kindBool:
		return strconv.FormatBool(n.b)
	case kindInt:
		return strconv.FormatInt(n.i, 10)
	case kindFloat:
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	case kindString:
		return n.s
	}
	return ""
}

// size counts a subtree's nodes, stopping once limit is reached.
func size(n *node, limit int) int {
	total := 1
	for _, p := range n.pairs {
		if total >= limit {
			return total
		}
		total += size(p.val, limit-total)
	}
	for _, it := range n.items {
		if total >= limit {
			return total
		}
		total += size(it, limit-total)
	}
	return total
}

// plain converts a subtree to ordinary Go values (map[string]any, []any,
// string, int, float64, bool, nil) for Params and Extra, which are handed
// to provider SDKs and JSON encoders.
func plain(n *node) any {
	switch n.kind {
	case kindBool:
		return n.b
	case kindInt:
		return int(n.i)
	case kindFloat:
		return n.f
	case kindString:
		return n.s
	case kindMap:
		m := make(map[string]any, len(n.pairs))
		for _, p := range n.pairs {
			m[p.key] = plain(p.val)
		}
		return m
	case kindSeq:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = plain(it)
		}
		return s
	}
	return nil
}
