package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// /inspect's long answers and vote reasons continue under their own
// column: no line runs past the width, every continuation line starts
// with the head's width of spaces, and no word is lost or split.
func TestHangWrapsUnderTheTextsColumn(t *testing.T) {
	head := "  agent1.1   researcher   "
	text := strings.Repeat("Paris is the capital of France, and has been since the tenth century; ", 4) + "https://example.com/" + strings.Repeat("x", 90)
	got := hang(head, text, 100)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], head+"Paris ") {
		t.Fatalf("lines: %q", lines)
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(head))
	for i, l := range lines {
		long := utf8.RuneCountInString(l) > 100
		if long && !strings.Contains(l, "https://") {
			t.Errorf("line %d is %d columns: %q", i, utf8.RuneCountInString(l), l)
		}
		if i > 0 && (!strings.HasPrefix(l, indent) || l[len(indent)] == ' ') {
			t.Errorf("line %d is not under the text's column: %q", i, l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(head+text), " ") {
		t.Errorf("words changed:\n%s", got)
	}
	if one := hang("  a  ", "short", 100); one != "  a  short" {
		t.Errorf("a short text: %q", one)
	}
}
