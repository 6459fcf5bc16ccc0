package webui

import "testing"

func TestLineDiff(t *testing.T) {
	for _, c := range []struct{ a, b, want, note string }{
		{"a\nb\nc\n", "a\nc\nd\n", " a\n-b\n c\n+d\n", ""},
		{"", "new\n", "+new\n", ""},
		{"gone\n", "", "-gone\n", ""},
		{"same\n", "same\n", "", "no change in its text (its mode or time changed)"},
		// Unchanged lines far from a change fold into "…".
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\nX\n", "…\n 6\n 7\n 8\n-9\n+X\n", ""},
	} {
		got, note := lineDiff(c.a, c.b)
		if got != c.want || note != c.note {
			t.Errorf("lineDiff(%q, %q) = %q, %q; want %q, %q", c.a, c.b, got, note, c.want, c.note)
		}
	}
}
