package inputlimit

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ParseYAML checks data against lim, then parses it with goccy/go-yaml.
// Between lexing and parsing it counts the nesting again on goccy's own
// tokens, so that a document the byte scan misjudged still never reaches
// the parser (whose cost grows with the square of the depth) nested
// deeper than lim.MaxDepth. Use it wherever YAML from outside is parsed;
// yaml.NodeToValue decodes the result.
func ParseYAML(data []byte, file string, lim Limits, opts ...parser.Option) (*ast.File, error) {
	if err := CheckYAML(data, file, lim); err != nil {
		return nil, err
	}
	tokens := lexer.Tokenize(string(data))
	if err := checkTokens(tokens, file, lim); err != nil {
		return nil, err
	}
	return parser.Parse(tokens, 0, opts...)
}

// tokenDepth is the deepest nesting checkTokens counts, and the deepest
// flow nesting in goccy's tokens (for tests).
func tokenDepth(tokens token.Tokens) (all, flow int) {
	d, _ := walkTokens(tokens, 0)
	f := 0
	for _, tk := range tokens {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			f++
			flow = max(flow, f)
		case token.SequenceEndType, token.MappingEndType:
			f = max(f-1, 0)
		}
	}
	return d, flow
}

func checkTokens(tokens token.Tokens, file string, lim Limits) error {
	if _, tk := walkTokens(tokens, lim.MaxDepth); tk != nil {
		e := &Error{File: file, Limit: "depth", Message: fmt.Sprintf("%s nests deeper than %d levels", lim.what(), lim.MaxDepth), Hint: lim.Usual}
		if tk.Position != nil {
			e.Line, e.Col, e.Offset = tk.Position.Line, tk.Position.Column, tk.Position.Offset
		}
		return e
	}
	return nil
}

// walkTokens counts nesting as the byte scan does, on goccy's tokens: flow
// collections by their brackets, block ones by the columns of keys and
// '- '. It returns the deepest nesting and, when limit > 0, the token that
// went past it.
func walkTokens(tokens token.Tokens, limit int) (int, *token.Token) {
	var block []blockLevel
	bsum, flow, deepest, emptyDash, nestAny := 0, 0, 0, -1, false
	structural := func(col int, seq bool) {
		ed, nest := emptyDash, nestAny
		emptyDash, nestAny = -1, false
		if nest { // after a property ending its line (see yscan.structural)
			block = append(block, blockLevel{col: col, seq: seq, key: !seq})
			bsum++
			return
		}
		for n := len(block); n > 0 && block[n-1].col > col; n-- {
			bsum -= block[n-1].weight()
			block = block[:n-1]
		}
		if n := len(block); !seq && ed == col && n > 0 && block[n-1].col == col {
			// A key under an empty '- ' in its column nests (see yscan.structural).
			block = append(block, blockLevel{col: col, key: true})
			bsum++
			return
		}
		if n := len(block); n > 0 && block[n-1].col == col {
			w := block[n-1].weight()
			block[n-1].seq = block[n-1].seq || seq
			block[n-1].key = block[n-1].key || !seq
			bsum += block[n-1].weight() - w
			return
		}
		block = append(block, blockLevel{col: col, seq: seq, key: !seq})
		bsum++
	}
	col := func(tk *token.Token) int {
		if tk == nil || tk.Position == nil {
			return 0
		}
		return tk.Position.Column
	}
	for i, tk := range tokens {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.DocumentHeaderType:
			block, bsum = block[:0], 0
		case token.SequenceEntryType, token.MappingKeyType:
			if flow == 0 {
				structural(col(tk), tk.Type == token.SequenceEntryType)
				if tk.Type == token.SequenceEntryType && endsLine(tokens, i) {
					emptyDash = col(tk)
				}
			}
		case token.TagType, token.AnchorType:
			// A property ending its line nests what follows (see
			// yscan.nestAfterProperty); an anchor's name is the next token.
			j := i
			if tk.Type == token.AnchorType && i+1 < len(tokens) {
				j = i + 1
			}
			if flow == 0 && endsLine(tokens, j) {
				nestAny = true
			}
			continue
		case token.MappingValueType:
			if flow == 0 {
				key := tk // `: v` with no key
				if i > 0 && isKey(tokens[i-1]) {
					key = tokens[i-1]
				}
				if key.Position != nil && tk.Position != nil && key.Position.Line < tk.Position.Line || key == tk {
					emptyDash = col(tk) // a key from a line above nests (see yscan)
					key = tk
				}
				// A tag or anchor before the key, on its line, starts the map.
				for j := i - 2; j >= 0 && key != tk; j-- {
					p := tokens[j]
					if p.Position == nil || key.Position == nil || p.Position.Line != key.Position.Line {
						break
					}
					if p.Type == token.TagType || p.Type == token.AnchorType {
						key = p
						continue
					}
					if j > 0 && tokens[j-1].Type == token.AnchorType {
						continue // the anchor's name
					}
					break
				}
				structural(col(key), false)
			}
		default:
			continue
		}
		deepest = max(deepest, bsum+flow)
		if limit > 0 && bsum+flow > limit {
			return deepest, tk
		}
	}
	return deepest, nil
}

// isKey tells whether tk can be a key before a ':' (not an indicator).
func isKey(tk *token.Token) bool {
	switch tk.Type {
	case token.MappingValueType, token.SequenceEntryType, token.MappingKeyType, token.CollectEntryType,
		token.SequenceStartType, token.MappingStartType, token.DocumentHeaderType, token.CommentType:
		return false
	}
	return true
}

// endsLine tells whether tokens[i] is the last on its line, comments aside.
func endsLine(tokens token.Tokens, i int) bool {
	for _, tk := range tokens[i+1:] {
		if tk.Type == token.CommentType {
			continue
		}
		return tk.Position == nil || tokens[i].Position == nil || tk.Position.Line > tokens[i].Position.Line
	}
	return true
}
