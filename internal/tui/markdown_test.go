package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// What an answer's markdown looks like on the screen, styles aside: the
// text of every block, where it starts, and what the markup became.
func TestMarkdownBlocks(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"heading and paragraph", "# Paris\n\nThe capital\nof France.", "   Paris \n\n  The capital of France."},
		{"lower headings keep their marks", "## Sub\ntext", "  ## Sub\n\n  text"},
		{"emphasis and code lose their marks", "**bold** *it* `x := 1` ~~old~~", "  bold it x := 1 old"},
		{"snake_case is not emphasis", "use snake_case_name and a*b", "  use snake_case_name and a*b"},
		{"escapes", `\*not emphasis\*`, "  *not emphasis*"},
		{"links show their target", "see [the docs](https://x.y/z) or <https://a.b>", "  see the docs https://x.y/z or https://a.b"},
		{"lists nest", "- a\n- b\n  - c\n1. one\n2. two", "  • a\n  • b\n    • c\n  1. one\n  2. two"},
		{"code blocks are verbatim", "```go\nx := **y**\n  indented\n```", "    x := **y**\n      indented"},
		{"indented code", "text\n\n    code line\n", "  text\n\n    code line"},
		{"quotes", "> a **b**\n> c", "  │ a b c"},
		{"rules", "a\n\n---\n\nb", "  a\n\n  " + strings.Repeat("─", 40) + "\n\n  b"},
		{"tables align", "| a | bb |\n|---|----|\n| long | x |", "  a    │ bb\n  ─────┼───\n  long │ x"},
		{"an unclosed span is text", "2 * 3 and `tick", "  2 * 3 and `tick"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ansi.Strip(renderMarkdown(tt.src, 80))
			if got != tt.want {
				t.Errorf("renderMarkdown(%q)\n got: %q\nwant: %q", tt.src, got, tt.want)
			}
		})
	}
}

// Styles are what the markup asked for: bold is bold and the rest of the
// line is not.
func TestMarkdownStyles(t *testing.T) {
	got := renderMarkdown("plain **strong** plain", 80)
	if !strings.Contains(got, mdText.Bold(true).Render("strong")) {
		t.Errorf("bold span not bold: %q", got)
	}
	if strings.Count(got, "\x1b[1") != 1 {
		t.Errorf("bold leaks past its span: %q", got)
	}
}

// Paragraphs and list items wrap within the screen, and a style never
// runs past a line's end (the frame's padding would take it).
func TestMarkdownWrapsWithinWidth(t *testing.T) {
	long := strings.Repeat("word **strong words** `code` ", 20)
	for _, width := range []int{24, 40, 80} {
		for _, src := range []string{long, "- " + long + "\n  - " + long, "> " + long} {
			for _, l := range strings.Split(renderMarkdown(src, width), "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("width %d: line of %d columns: %q", width, w, ansi.Strip(l))
				}
				if i := strings.LastIndex(l, "\x1b["); i >= 0 && !strings.HasPrefix(l[i:], "\x1b[m") {
					t.Errorf("width %d: line ends inside a style: %q", width, l)
				}
			}
		}
	}
}
