package cli

import (
	"strings"
	"unicode/utf8"
)

// inspectWidth is the width /inspect lays its lines out in: a text that
// would run past it continues on the next line, under its own first
// character, not at the left margin where it would hide the columns.
const inspectWidth = 100

// hang returns head followed by text (its spaces collapsed), wrapped at
// width columns with every continuation line indented by head's width. A
// word longer than the room is put on a line of its own.
func hang(head, text string, width int) string {
	indent := utf8.RuneCountInString(head)
	room := max(width-indent, 20)
	var b strings.Builder
	b.WriteString(head)
	n := 0
	for _, word := range strings.Fields(text) {
		l := utf8.RuneCountInString(word)
		switch {
		case n == 0:
		case n+1+l > room:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}
