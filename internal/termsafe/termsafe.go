// Package termsafe makes text from outside (a question, a model's answer,
// a tool's output, a provider's error, an agent's name from a config) safe
// to print on a terminal: control characters become visible escapes, so
// that an answer holding "\x1b]0;pwned\x07" cannot retitle the window,
// "\x1b[2J" cannot clear the screen and "\r" cannot overwrite the line
// before it.
//
// Escaped: the C0 controls except newline and tab (ESC, BEL, backspace,
// carriage return, …), DEL, the C1 controls U+0080–U+009F (CSI U+009B,
// OSC U+009D, …) and bytes that are not UTF-8 (a lone 0x9B is CSI to an
// 8-bit terminal). Everything else, other scripts and emoji included, is
// kept as it is.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character but \n and \t written as
// a visible escape: \x1b for ESC, \u009b for CSI, \xNN for a byte that is
// not UTF-8. It returns s itself when there is nothing to escape.
func String(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeAt is the index of the first byte String must change, -1 when none.
func unsafeAt(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || (r >= 0x80 && r <= 0x9f) {
			return i
		}
		i += size
	}
	return -1
}

// Writer returns a writer that escapes, as String does, everything written
// through it to w. Each Write is escaped on its own (the writer keeps no
// state, so concurrent writers need no lock of their own beyond what w
// needs): a UTF-8 sequence split across two writes shows as \xNN bytes.
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(*writer); ok || w == nil || w == io.Discard {
		return w
	}
	return &writer{w: w}
}

type writer struct{ w io.Writer }

func (t *writer) Write(p []byte) (int, error) {
	s := string(p)
	if unsafeAt(s) < 0 {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, String(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}
