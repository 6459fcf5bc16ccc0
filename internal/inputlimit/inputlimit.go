// Package inputlimit refuses oversized and deeply nested YAML and JSON
// before a parser sees them.
//
// goccy/go-yaml's parser costs time and memory quadratic in the nesting
// depth: 30 KB of '[' takes 1.4 GB, 100 KB took 3.9 GB and 13 s, and 400 KB
// was killed at 22 GB. The checks here run in one pass over the bytes, in
// time linear in the input and memory bounded by the limits (not by the
// input), and name the line and column where a limit was crossed.
//
// The YAML scan follows the goccy scanner's rules for where a quoted
// scalar, a comment or a block scalar begins and ends (the places where a
// scan that skips text could be led to skip structure), and counts nesting
// conservatively: a document it lets through is never nested deeper, as
// goccy parses it, than the limit. FuzzYAMLDepthBound checks that against
// goccy itself.
package inputlimit

import (
	"fmt"
	"unicode/utf8"
)

// Limits bounds a YAML document. A zero field is no limit.
type Limits struct {
	// What the document is, for messages: "config", "scenario".
	What string
	// MaxBytes is the largest document accepted.
	MaxBytes int
	// MaxDepth is the deepest nesting accepted, block and flow collections
	// counted together.
	MaxDepth int
	// MaxAliases is the most alias references (*name) accepted.
	MaxAliases int
	// MaxAnchors is the most anchors (&name) accepted; the scan keeps one
	// record per anchor to estimate what aliases expand to.
	MaxAnchors int
	// MaxAliasNodes bounds the nodes aliases add once expanded ("billion
	// laughs": nine levels of ten aliases make a billion nodes).
	MaxAliasNodes int
	// Usual says what documents of this kind need, after a depth error:
	// "MassGen configs need fewer than 10".
	Usual string
}

// Config is what a MassGen config may be. The largest of the 382 upstream
// example configs is 13 KB, the deepest nests 9 levels as the scan counts
// them, and none uses an anchor. 256 KiB (20 times the largest), 64
// levels, 1000 aliases and 100 anchors leave room for any config a person
// writes while bounding what goccy spends on the worst one that passes:
// 64 levels of '[' cost it well under a millisecond, and 256 KiB of a
// shallow flow list about 0.4 s and 95 MB (1 MiB: 2.3 s and 377 MB).
var Config = Limits{
	What:          "config",
	MaxBytes:      256 << 10,
	MaxDepth:      64,
	MaxAliases:    1000,
	MaxAnchors:    100,
	MaxAliasNodes: 100_000,
	Usual:         "MassGen configs need fewer than 10",
}

// Error is a refused document: where the limit was crossed, and what to do.
type Error struct {
	File      string
	Line, Col int // 1-based; Col counts characters
	Offset    int // byte offset
	Limit     string
	Message   string
	Hint      string
}

func (e *Error) Error() string {
	s := e.Message
	if e.File != "" || e.Line > 0 {
		s = fmt.Sprintf("%s at %s:%d:%d", e.Message, e.File, e.Line, e.Col)
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// position returns the 1-based line and character column of byte offset
// off; it reads data[:off] once, when an error is reported.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

func (lim Limits) what() string {
	if lim.What == "" {
		return "document"
	}
	return lim.What
}

// TooLarge reports a document of size bytes, over lim.MaxBytes, located
// where it crosses the limit; head holds at least its first MaxBytes bytes
// (a reader need not read the rest).
func TooLarge(head []byte, size int64, file string, lim Limits) *Error {
	line, col := position(head, lim.MaxBytes)
	return &Error{File: file, Line: line, Col: col, Offset: lim.MaxBytes, Limit: "size",
		Message: fmt.Sprintf("%s is %s, larger than the %s limit, which it crosses", lim.what(), byteSize(size), byteSize(int64(lim.MaxBytes))),
		Hint:    fmt.Sprintf("a %s is a few kilobytes: check that this is the right file", lim.what())}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
