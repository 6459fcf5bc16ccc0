package inputlimit

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// CheckYAML returns nil when data is within lim, and otherwise an *Error
// naming file:line:column where the first limit was crossed. It reads data
// once and keeps a few records per nesting level and per anchor, whatever
// the document's size.
func CheckYAML(data []byte, file string, lim Limits) error {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return TooLarge(data, int64(len(data)), file, lim)
	}
	s := &yscan{data: data, file: file, lim: lim, line: 1, delimCol: -1, colAt: -1, scalarCol: -1, emptyDash: -1, propCol: -1}
	if err := s.run(); err != nil {
		return err
	}
	return nil
}

// yamlDepth is the deepest nesting CheckYAML counts, and the deepest flow
// nesting (for tests).
func yamlDepth(data []byte) (all, flow int, err error) {
	s := &yscan{data: data, line: 1, delimCol: -1, colAt: -1, scalarCol: -1, emptyDash: -1, propCol: -1}
	err = s.run()
	return s.deepest, s.deepestFlow, err
}

// blockLevel is one open block collection: its column, and whether
// sequence entries and keys were seen there (a sequence may sit at its
// key's column, which is two levels in one column).
type blockLevel struct {
	col      int
	seq, key bool
}

func (l blockLevel) weight() int {
	if l.seq && l.key {
		return 2
	}
	return 1
}

// anchor is what the scan knows of one &name: where its node began (in
// units, see yscan.units) and, once the node ended, how many units it spans.
type anchor struct {
	name   []byte // a slice of the document
	start  int
	weight int // -1 while the node is open
	flow   int // flow depth at the anchor: the node ends at a ',' or closer there
	col    int // in block context the node ends at a line indented this much or less
}

// yscan follows the goccy scanner's rules (scanner/scanner.go, v1.19.2):
// a quote, '|', '>', '&', '*', '!', '- ' or '? ' is an indicator only where
// no plain scalar is under way ("the buffer is empty"); in a flow
// collection '[' and '{' always open one; a plain scalar continues onto a
// line indented more than the last key or '- ' (goccy's lastDelimColumn);
// a block scalar ends at a line indented less than its first line.
type yscan struct {
	data []byte
	file string
	lim  Limits

	i, line, ls int // current byte, its 1-based line, that line's start
	colAt, col  int // cache for column(): byte offset and its column

	flow  []byte // open flow collections, '[' or '{', and 'p' for a one-pair map in a '['
	maps  int    // open '{'
	seqs  int    // open '['
	block []blockLevel
	bsum  int // block depth: the levels' weights

	deepest, deepestFlow int

	plain     bool // a plain scalar is under way
	prevSpace bool // the previous byte was a space, a tab or a line break
	lastColon bool // the last token was a ':' in a flow collection
	scalarCol int  // column where the last scalar began (a key, if ':' follows)
	scalarOff int  // and its byte offset
	delimCol  int  // 0-based column of the last key, '- ' or '? '; -1 for none
	emptyDash int  // column of a '- ' with nothing after it on its line, until the next key or '- '; -1 for none
	nestAny   bool // after a tag or anchor ending its line: the next key or '- ' nests, in any column
	propCol   int  // column of a tag or anchor before a key on line propLine; -1 for none
	propLine  int
	lineInd   int  // indentation of the current block-context line
	ind       int  // indentation of the current line
	directive bool // in a %directive: words are tokens, ':' is text

	units      int // rough node count so far, aliases counted expanded
	aliasUnits int // the part aliases add
	aliases    int
	anchors    []anchor
	open       []int // open anchors, innermost last
}

func (s *yscan) run() error {
	d := s.data
	for s.i < len(d) {
		if err := s.lineStart(); err != nil {
			return err
		}
		for s.i < len(d) && !isBreak(d[s.i]) {
			if err := s.token(); err != nil {
				return err
			}
		}
		s.newline()
	}
	s.closeAnchors(func(anchor) bool { return true })
	return nil
}

func isBreak(c byte) bool { return c == '\n' || c == '\r' }

// newline consumes the line break at s.i (\n, \r\n or a lone \r, as goccy
// reads them) and starts the next line.
func (s *yscan) newline() {
	d := s.data
	if s.i >= len(d) {
		return
	}
	if d[s.i] == '\r' && s.i+1 < len(d) && d[s.i+1] == '\n' {
		s.i++
	}
	s.i++
	s.line++
	s.ls = s.i
}

// skipLine moves to the line break ending the current line.
func (s *yscan) skipLine() {
	for s.i < len(s.data) && !isBreak(s.data[s.i]) {
		s.i++
	}
}

// column is the 0-based character column of byte offset i on the current
// line; consecutive calls move forward, so a line costs its length once.
func (s *yscan) column(i int) int {
	if s.colAt < s.ls || s.colAt > i {
		s.colAt, s.col = s.ls, 0
	}
	s.col += utf8.RuneCount(s.data[s.colAt:i])
	s.colAt = i
	return s.col
}

func (s *yscan) errorAt(off int, limit, msg, hint string) *Error {
	line, col := position(s.data, off)
	return &Error{File: s.file, Line: line, Col: col, Offset: off, Limit: limit, Message: msg, Hint: hint}
}

func (s *yscan) depth() int { return s.bsum + len(s.flow) }

func (s *yscan) checkDepth(at int) error {
	d := s.depth()
	s.deepest = max(s.deepest, d)
	s.deepestFlow = max(s.deepestFlow, len(s.flow))
	if s.lim.MaxDepth > 0 && d > s.lim.MaxDepth {
		hint := s.lim.Usual
		if hint != "" {
			hint += ": "
		}
		hint += "look for an unclosed '[' or '{', or indentation that keeps growing"
		return s.errorAt(at, "depth", fmt.Sprintf("%s nests deeper than %d levels", s.lim.what(), s.lim.MaxDepth), hint)
	}
	return nil
}

func isDocMarker(d []byte, i int) bool {
	if i+3 > len(d) || !(bytes.HasPrefix(d[i:], []byte("---")) || bytes.HasPrefix(d[i:], []byte("..."))) {
		return false
	}
	return i+3 == len(d) || d[i+3] == ' ' || d[i+3] == '\t' || isBreak(d[i+3])
}

// isDocEnd: goccy ends a document at three dots in the first column,
// whatever follows them ("...[" is an end and a '[').
func isDocEnd(d []byte, i int) bool {
	return bytes.HasPrefix(d[i:], []byte("...")) && (i+3 == len(d) || d[i+3] != '.')
}

// lineStart reads a line's indentation and, outside flow collections,
// closes the block levels and anchors the line ends.
func (s *yscan) lineStart() error {
	d := s.data
	ind := 0
	for s.i < len(d) && (d[s.i] == ' ' || d[s.i] == '\t') {
		s.i++
		ind++
	}
	if s.directive {
		s.plain = false // goccy ends a directive's last word at the line break
	}
	s.prevSpace, s.directive, s.ind = true, false, ind
	if s.i >= len(d) || isBreak(d[s.i]) {
		return nil // blank lines change nothing, in goccy either
	}
	if len(s.flow) > 0 {
		// goccy applies its line rules (below) inside flow collections too.
		if s.plain && ind <= s.delimCol {
			s.plain = false
		}
		switch {
		case d[s.i] == '#':
			s.skipLine()
			s.plain = false
		case s.plain && d[s.i] == '-' && s.delimCol >= 0:
			return s.rawFolded(ind)
		}
		return nil
	}
	if ind == 0 && (isDocMarker(d, s.i) || isDocEnd(d, s.i)) {
		s.block, s.bsum = s.block[:0], 0
		s.plain, s.delimCol = false, -1
		s.closeAnchors(func(anchor) bool { return true })
		s.i += 3
		return nil
	}
	// A plain scalar continues onto a line indented more than the last key
	// or '- '; any other line ends it, as does a comment.
	if s.plain && ind <= s.delimCol {
		s.plain = false
	}
	if d[s.i] == '#' {
		s.skipLine()
		s.plain = false
		return nil
	}
	if s.plain {
		if d[s.i] == '-' && s.delimCol >= 0 {
			// goccy reads a continuation line that starts with '-' as the
			// start of a folded block ("raw folded"): text to its end
			// (once there is a key or '- ' to be indented from).
			return s.rawFolded(ind)
		}
		return nil
	}
	s.lineInd = ind
	s.scalarCol, s.propCol = -1, -1
	// Block levels close at the next key or '- ' left of them, as goccy's
	// parser closes them, not at the indentation of any line.
	s.closeAnchors(func(a anchor) bool { return a.flow > 0 || a.col >= ind })
	return nil
}

// popTo closes the block levels deeper than col.
func (s *yscan) popTo(col int) {
	for n := len(s.block); n > 0 && s.block[n-1].col > col; n-- {
		s.bsum -= s.block[n-1].weight()
		s.block = s.block[:n-1]
	}
}

// structural records a key or a '- ' at col (byte offset at): a new block
// level when it is right of the innermost one.
func (s *yscan) structural(col, at int, seq bool) error {
	if len(s.flow) > 0 {
		return nil
	}
	emptyDash, nestAny := s.emptyDash, s.nestAny
	s.emptyDash, s.nestAny = -1, false
	if nestAny {
		// After a tag or anchor that ended its line goccy nests the next
		// key or '- ' in the property's node, whatever its column:
		// "- - !t\n" repeated nests two levels a line. Nothing closes.
		s.block = append(s.block, blockLevel{col: col, seq: seq, key: !seq})
		s.bsum++
		return s.checkDepth(at)
	}
	s.popTo(col)
	n := len(s.block)
	if !seq && emptyDash == col && n > 0 && s.block[n-1].col == col {
		// goccy nests a key under the empty '- ' above it, in the same
		// column: "- \nk:\n- \nk:" is four levels, not two.
		s.block = append(s.block, blockLevel{col: col, key: true})
		s.bsum++
	} else if n > 0 && s.block[n-1].col == col {
		l := &s.block[n-1]
		w := l.weight()
		l.seq = l.seq || seq
		l.key = l.key || !seq
		s.bsum += l.weight() - w
	} else {
		s.block = append(s.block, blockLevel{col: col, seq: seq, key: !seq})
		s.bsum++
	}
	return s.checkDepth(at)
}

// restIsEmpty tells whether the line holds only spaces and a comment from
// s.i on.
func (s *yscan) restIsEmpty() bool {
	for j := s.i; j < len(s.data) && !isBreak(s.data[j]); j++ {
		switch s.data[j] {
		case ' ', '\t':
		case '#':
			return true
		default:
			return false
		}
	}
	return true
}

func (s *yscan) next() byte {
	if s.i+1 < len(s.data) {
		return s.data[s.i+1]
	}
	return 0
}

// token reads from s.i to the end of one token (or one byte of a plain
// scalar).
func (s *yscan) token() error {
	d := s.data
	c := d[s.i]
	if c == ' ' || c == '\t' {
		s.prevSpace = true
		if s.directive {
			s.plain = false // goccy cuts a directive into words
		}
		s.i++
		return nil
	}
	if c == '#' && (!s.plain || s.prevSpace) {
		s.skipLine()
		s.plain = false // goccy cuts the scalar at a comment
		return nil
	}
	s.prevSpace = false
	inFlow := len(s.flow) > 0
	switch c {
	case '[', '{':
		if s.plain && !inFlow {
			break
		}
		return s.openFlow(c)
	case ']':
		if s.seqs > 0 {
			return s.closeFlow('[')
		}
		if !s.plain {
			return s.errorAt(s.i, "syntax", "']' closes no '['", "remove it or quote the value")
		}
	case '}':
		if s.maps > 0 {
			return s.closeFlow('{')
		}
	case ',':
		if inFlow {
			s.plain, s.lastColon = false, false
			if n := len(s.flow); s.flow[n-1] == 'p' {
				s.flow = s.flow[:n-1]
			}
			f := len(s.flow)
			s.closeAnchors(func(a anchor) bool { return a.flow >= f })
			s.i++
			return nil
		}
	case ':':
		if s.directive {
			break
		}
		nc := s.next()
		delim := nc == ' ' || nc == '\t' || isBreak(nc) || s.i+1 == len(s.data) // not a NUL, for goccy
		if s.maps > 0 {
			delim = nc != '/' && !s.lastColon
		}
		if delim {
			s.plain, s.lastColon = false, inFlow
			if n := len(s.flow); n > 0 && s.flow[n-1] == '[' {
				// `[a: b]` holds a one-pair map: a level, to the next ',' or ']'.
				s.flow = append(s.flow, 'p')
				if err := s.checkDepth(s.i); err != nil {
					return err
				}
			}
			s.i++
			col, at := s.column(s.i-1), s.i-1
			if s.scalarCol < 0 && !inFlow {
				// No key on this line: goccy takes one from a line above,
				// and nests it ("0:\n0\n:" is two levels).
				s.emptyDash = col
			}
			if s.scalarCol >= 0 {
				// goccy's lastDelimColumn is the key's, in flow collections too.
				col, at = s.scalarCol, s.scalarOff
				s.delimCol = col
				s.scalarCol = -1
			}
			if s.propCol >= 0 && s.propCol < col {
				// goccy's map starts at a tag or anchor before its first key.
				col = s.propCol
			}
			s.propCol = -1
			return s.structural(col, at, false)
		}
	}
	if s.plain {
		s.i++
		return nil
	}
	s.lastColon = false
	switch c {
	case '"', '\'':
		s.scalarCol, s.scalarOff = s.column(s.i), s.i
		s.units++
		s.quoted(c)
		return nil
	case '|', '>':
		s.units++
		s.blockScalar()
		return nil
	case '&':
		return s.anchor()
	case '*':
		return s.alias()
	case '!':
		if !s.directive {
			s.markProperty()
			s.tag()
			s.nestAfterProperty()
			return nil
		}
	case '%':
		if s.ind == 0 {
			s.directive = true
			s.i++
			return nil
		}
	case '-', '?':
		nc := s.next()
		if nc == ' ' || nc == '\t' || (c == '-' && (isBreak(nc) || nc == 0)) {
			col := s.column(s.i)
			s.units++
			s.i++
			s.delimCol = col
			s.scalarCol, s.propCol = -1, -1
			err := s.structural(col, s.i-1, c == '-')
			if c == '-' && s.restIsEmpty() {
				s.emptyDash = col
			}
			return err
		}
	}
	s.plain = true
	s.scalarCol, s.scalarOff = s.column(s.i), s.i
	s.units++
	s.i++
	return nil
}

func (s *yscan) openFlow(c byte) error {
	s.flow = append(s.flow, c)
	if c == '[' {
		s.seqs++
	} else {
		s.maps++
	}
	s.plain, s.lastColon = false, false
	s.scalarCol = -1
	s.units++
	if err := s.checkDepth(s.i); err != nil {
		return err
	}
	s.i++
	return nil
}

// closeFlow closes the innermost open collection, which must be of that
// kind: goccy counts '[' and '{' apart, so after a mismatched closer its
// nesting and ours would differ (and the document is wrong anyway).
func (s *yscan) closeFlow(c byte) error {
	n := len(s.flow)
	for n > 0 && s.flow[n-1] == 'p' {
		n--
	}
	if n > 0 && s.flow[n-1] != c {
		open, close := "'['", "'}'"
		if c == '[' {
			open, close = "'{'", "']'"
		}
		return s.errorAt(s.i, "syntax", fmt.Sprintf("%s closes a %s", close, open), "match each '[' with ']' and each '{' with '}'")
	}
	n = len(s.flow)
	for n > 0 {
		n--
		k := s.flow[n]
		switch k {
		case '[':
			s.seqs--
		case '{':
			s.maps--
		}
		if k == c {
			break
		}
	}
	s.flow = s.flow[:n]
	s.plain, s.lastColon = false, false
	s.scalarCol, s.scalarOff = s.column(s.i), s.i // `[a]: b` is a key
	f := n
	s.closeAnchors(func(a anchor) bool { return a.flow > f })
	s.i++
	return nil
}

// quoted skips a quoted scalar, which may span lines; an unclosed one runs
// to the end, where goccy fails too.
func (s *yscan) quoted(q byte) {
	d := s.data
	s.i++
	for s.i < len(d) {
		c := d[s.i]
		switch {
		case q == '"' && c == '\\' && s.i+1 < len(d):
			s.i++
			if isBreak(d[s.i]) {
				s.newline()
				continue
			}
		case q == '\'' && c == '\'' && s.i+1 < len(d) && d[s.i+1] == '\'':
			s.i++
		case c == q:
			s.i++
			s.plain = false
			return
		case isBreak(c):
			s.newline()
			continue
		}
		s.i++
	}
}

// blockScalar skips a literal or folded scalar: its header line, then
// every line indented at least as much as its first (goccy: more than the
// last key or '- ' for the first line).
func (s *yscan) blockScalar() {
	d := s.data
	last := s.delimCol
	if s.column(s.i) == 0 {
		last = 0
	}
	m := -1
	for j := s.i + 1; j < len(d) && !isBreak(d[j]) && d[j] != ' ' && d[j] != '#'; j++ {
		if c := d[j]; c >= '1' && c <= '9' {
			m = last + int(c-'0')
		}
	}
	s.skipLine()
	first := true
	for s.i < len(d) {
		j := s.i
		if d[j] == '\r' && j+1 < len(d) && d[j+1] == '\n' {
			j++
		}
		j++
		k, ind := j, 0
		for k < len(d) && (d[k] == ' ' || d[k] == '\t') {
			k++
			ind++
		}
		if k >= len(d) {
			break
		}
		if !isBreak(d[k]) {
			if ind == 0 && isDocMarker(d, k) {
				break
			}
			end := ind < m
			if first {
				end = last >= 0 && ind <= last
			}
			if end {
				break
			}
			if m < 0 {
				m = ind
			}
			first = false
		}
		s.newline()
		s.skipLine()
	}
	if m >= 0 && !first {
		s.delimCol = m - 1
	}
	s.plain = false
	s.scalarCol = -1
}

// rawFolded skips what goccy reads as a folded block begun by a '-' on a
// plain scalar's continuation line: lines indented at least as much.
func (s *yscan) rawFolded(ind int) error {
	d := s.data
	s.skipLine()
	for s.i < len(d) {
		j := s.i
		if d[j] == '\r' && j+1 < len(d) && d[j+1] == '\n' {
			j++
		}
		j++
		k, n := j, 0
		for k < len(d) && (d[k] == ' ' || d[k] == '\t') {
			k++
			n++
		}
		if k >= len(d) {
			break
		}
		if !isBreak(d[k]) && (n < ind || (n == 0 && isDocMarker(d, k))) {
			break
		}
		s.newline()
		s.skipLine()
	}
	s.delimCol = ind - 1
	s.plain = false
	return nil
}

// name reads an anchor's or alias's name: up to a space or line break, or
// in a flow collection a flow indicator. goccy starts the name with an
// empty buffer, so a first byte that is an indicator acts as one: `&[a]`
// is an empty name and a sequence.
func (s *yscan) name() []byte {
	d := s.data
	start := s.i
	if s.i < len(d) {
		switch c := d[s.i]; c {
		case '[', ']', '{', '"', '\'', '|', '>', '!', '&', '*', '#', '%':
			return nil
		case ',', '}':
			if len(s.flow) > 0 {
				return nil
			}
		case '-', '?':
			if nc := s.next(); nc == ' ' || nc == '\t' || nc == 0 || isBreak(nc) {
				return nil
			}
		}
	}
	inFlow := len(s.flow) > 0
	for s.i < len(d) {
		c := d[s.i]
		if c == ' ' || c == '\t' || isBreak(c) {
			break
		}
		if inFlow && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
			break
		}
		s.i++
	}
	return d[start:s.i]
}

func (s *yscan) tag() {
	d := s.data
	inFlow := len(s.flow) > 0
	for s.i < len(d) {
		c := d[s.i]
		if c == ' ' || isBreak(c) || (inFlow && c == ',') {
			break
		}
		s.i++
	}
}

// markProperty notes where a tag or anchor begins, for the key it may
// precede on its line.
func (s *yscan) markProperty() {
	if s.propCol < 0 || s.propLine != s.line {
		s.propCol, s.propLine = s.column(s.i), s.line
	}
}

func (s *yscan) anchor() error {
	s.markProperty()
	at := s.i
	s.i++
	name := s.name()
	if s.lim.MaxAnchors > 0 && len(s.anchors) >= s.lim.MaxAnchors {
		return s.errorAt(at, "anchors", fmt.Sprintf("%s has more than %d anchors (&name)", s.lim.what(), s.lim.MaxAnchors),
			"write the shared settings out, or share fewer of them")
	}
	a := anchor{name: name, start: s.units, weight: -1, flow: len(s.flow)}
	if a.flow == 0 {
		// The node ends at a line indented no more than the key or '- '
		// it belongs to, or, at the start of a line, than the anchor.
		a.col = s.lineInd - 1
		if s.delimCol >= s.lineInd {
			a.col = s.delimCol
		}
	}
	s.anchors = append(s.anchors, a)
	s.open = append(s.open, len(s.anchors)-1)
	s.plain = false
	s.nestAfterProperty()
	return nil
}

// nestAfterProperty: a tag or anchor that ends its line applies to what
// follows, and goccy nests the next key or '- ' in it ("a: !t\nb: 1" is
// two levels, "- !t\n- x" too).
func (s *yscan) nestAfterProperty() {
	if len(s.flow) == 0 && s.restIsEmpty() {
		s.nestAny = true
	}
}

func (s *yscan) alias() error {
	at := s.i
	s.scalarCol, s.scalarOff = s.column(s.i), s.i
	s.i++
	name := s.name()
	s.aliases++
	if s.lim.MaxAliases > 0 && s.aliases > s.lim.MaxAliases {
		return s.errorAt(at, "aliases", fmt.Sprintf("%s has more than %d aliases (*name)", s.lim.what(), s.lim.MaxAliases),
			"write the shared settings out, or share fewer of them")
	}
	w := 1
	for k := len(s.anchors) - 1; k >= 0; k-- {
		if a := s.anchors[k]; bytes.Equal(a.name, name) {
			w = a.weight
			if w < 0 {
				w = s.units - a.start
			}
			break
		}
	}
	w = max(w, 1)
	s.units += w
	s.aliasUnits += w
	if s.lim.MaxAliasNodes > 0 && s.aliasUnits > s.lim.MaxAliasNodes {
		return s.errorAt(at, "aliases", fmt.Sprintf("%s's aliases expand to more than %d nodes", s.lim.what(), s.lim.MaxAliasNodes),
			"aliases that refer to anchors full of aliases multiply (\"billion laughs\"): write the values out")
	}
	s.plain = false
	return nil
}

// closeAnchors ends the open anchors, innermost first, while ends says so,
// fixing each one's weight.
func (s *yscan) closeAnchors(ends func(anchor) bool) {
	for n := len(s.open); n > 0; n-- {
		a := &s.anchors[s.open[n-1]]
		if !ends(*a) {
			return
		}
		a.weight = max(s.units-a.start, 1)
		s.open = s.open[:n-1]
	}
}
