package tui

// The answers' markdown, drawn for the terminal. The TUI used glamour,
// whose syntax highlighter (chroma) and HTML sanitiser build their
// tables as the program starts: 20 ms of every massgen run, the TUI's
// or not, `massgen --version` included. Answers need far less: headings,
// paragraphs, emphasis, code, lists, quotes, rules, links and tables,
// wrapped to the screen. This file draws those with the standard library
// and the styles the TUI already has, and initialises nothing.

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The markdown styles: glamour's dark theme, which the TUI showed before.
var (
	mdText    = lipgloss.NewStyle().Foreground(lipgloss.Color("252"))
	mdH1      = lipgloss.NewStyle().Foreground(lipgloss.Color("228")).Background(lipgloss.Color("63")).Bold(true)
	mdHeading = lipgloss.NewStyle().Foreground(lipgloss.Color("39")).Bold(true)
	mdCode    = lipgloss.NewStyle().Foreground(lipgloss.Color("203")).Background(lipgloss.Color("236"))
	mdBlock   = lipgloss.NewStyle().Foreground(lipgloss.Color("251"))
	mdLink    = lipgloss.NewStyle().Foreground(lipgloss.Color("30"))
	mdDim     = lipgloss.NewStyle().Foreground(lipgloss.Color("240"))
)

// mdMargin is the left margin of every line.
const mdMargin = "  "

// The block patterns, compiled at the first answer drawn, not as the
// program starts.
var mdRx = sync.OnceValue(func() (r struct{ fence, atx, rule, quote, item, delim *regexp.Regexp }) {
	r.fence = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	r.atx = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$`)
	r.rule = regexp.MustCompile(`^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	r.quote = regexp.MustCompile(`^ {0,3}> ?(.*)$`)
	r.item = regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$`)
	r.delim = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	return r
})

// renderMarkdown draws text for a screen width wide: every line starts
// with the margin, and paragraphs wrap within width-4 columns.
func renderMarkdown(text string, width int) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\t", "    ")
	out := mdBlocks(strings.Split(text, "\n"), max(20, width-4))
	for i, l := range out {
		if l != "" {
			out[i] = mdMargin + l
		}
	}
	return strings.Join(out, "\n")
}

// mdBlocks draws the block structure of lines within width columns, one
// blank line between blocks.
func mdBlocks(lines []string, width int) []string {
	var out []string
	block := func(ls ...string) {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			i++
		case mdRx().fence.MatchString(line):
			fence := mdRx().fence.FindStringSubmatch(line)[1]
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, mdBlock.Render(strings.TrimRight(lines[i], " ")))
			}
			i++ // the closing fence
			block(indent(code, "  ")...)
		case mdRx().atx.MatchString(line):
			m := mdRx().atx.FindStringSubmatch(line)
			block(heading(len(m[1]), m[2], width)...)
			i++
		case mdRx().rule.MatchString(line):
			block(mdDim.Render(strings.Repeat("─", min(width, 40))))
			i++
		case mdRx().quote.MatchString(line):
			var inner []string
			for ; i < len(lines) && mdRx().quote.MatchString(lines[i]); i++ {
				inner = append(inner, mdRx().quote.FindStringSubmatch(lines[i])[1])
			}
			block(indent(mdBlocks(inner, width-2), mdDim.Render("│")+" ")...)
		case mdRx().item.MatchString(line):
			end := listEnd(lines, i)
			block(list(lines[i:end], width)...)
			i = end
		case strings.HasPrefix(strings.TrimSpace(line), "|") && i+1 < len(lines) && mdRx().delim.MatchString(lines[i+1]):
			end := i + 2
			for end < len(lines) && strings.Contains(lines[end], "|") && strings.TrimSpace(lines[end]) != "" {
				end++
			}
			block(table(lines[i:end], width)...)
			i = end
		case strings.HasPrefix(line, "    "):
			var code []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				code = append(code, mdBlock.Render(strings.TrimRight(strings.TrimPrefix(lines[i], "    "), " ")))
			}
			for len(code) > 0 && ansi.Strip(code[len(code)-1]) == "" {
				code = code[:len(code)-1]
			}
			block(indent(code, "  ")...)
		default:
			var para []string
			for ; i < len(lines) && isParagraphLine(lines[i]); i++ {
				para = append(para, strings.TrimSpace(lines[i]))
			}
			if len(para) == 0 { // a line no rule above took, drawn as text
				para, i = []string{strings.TrimSpace(line)}, i+1
			}
			block(wrap(inline(strings.Join(para, " "), mdText), width)...)
		}
	}
	return out
}

// isParagraphLine reports whether line continues a paragraph: text that
// starts no other block.
func isParagraphLine(line string) bool {
	return strings.TrimSpace(line) != "" && !mdRx().fence.MatchString(line) && !mdRx().atx.MatchString(line) &&
		!mdRx().rule.MatchString(line) && !mdRx().quote.MatchString(line) && !mdRx().item.MatchString(line)
}

func heading(level int, text string, width int) []string {
	if level == 1 {
		return []string{mdH1.Render(" " + ansi.Truncate(text, width-2, "…") + " ")}
	}
	return wrap(inline(strings.Repeat("#", level)+" "+text, mdHeading), width)
}

// listEnd is where the list starting at lines[i] ends: at a blank line
// followed by a line that is neither an item nor indented under one, or
// at a line that starts another block.
func listEnd(lines []string, i int) int {
	for i++; i < len(lines); i++ {
		l := lines[i]
		switch {
		case mdRx().item.MatchString(l) || strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "":
		case strings.TrimSpace(l) == "":
			if i+1 >= len(lines) || !(mdRx().item.MatchString(lines[i+1]) || strings.HasPrefix(lines[i+1], "  ")) {
				return i
			}
		case isParagraphLine(l):
			// a lazy continuation of the item's text
		default:
			return i
		}
	}
	return i
}

// list draws a list's items, nested by their indentation: a bullet or
// number, then the item's text wrapped under itself.
func list(lines []string, width int) []string {
	type item struct {
		depth  int
		marker string
		text   []string
	}
	var items []item
	var indents []int // the indentation of each open level
	for _, l := range lines {
		m := mdRx().item.FindStringSubmatch(l)
		if m == nil {
			if t := strings.TrimSpace(l); t != "" && len(items) > 0 {
				items[len(items)-1].text = append(items[len(items)-1].text, t)
			}
			continue
		}
		ind := len(m[1])
		for len(indents) > 0 && ind < indents[len(indents)-1] {
			indents = indents[:len(indents)-1]
		}
		if len(indents) == 0 || ind > indents[len(indents)-1]+1 {
			indents = append(indents, ind)
		}
		marker := "•"
		if n, err := strconv.Atoi(strings.TrimRight(m[2], ".)")); err == nil {
			marker = strconv.Itoa(n) + "."
		}
		items = append(items, item{depth: len(indents) - 1, marker: marker, text: []string{m[3]}})
	}
	var out []string
	for _, it := range items {
		pad := strings.Repeat("  ", it.depth)
		head := pad + it.marker + " "
		hang := strings.Repeat(" ", ansi.StringWidth(head))
		body := wrap(inline(strings.Join(it.text, " "), mdText), max(10, width-len(hang)))
		for j, b := range body {
			if j == 0 {
				out = append(out, mdText.Render(head)+b)
			} else {
				out = append(out, hang+b)
			}
		}
	}
	return out
}

// table draws a pipe table with its columns aligned, or, when it is wider
// than the screen, its rows as they were written, wrapped.
func table(lines []string, width int) []string {
	var rows [][]string
	for j, l := range lines {
		if j == 1 {
			continue // the delimiter row
		}
		l = strings.TrimSpace(l)
		l = strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|")
		cells := strings.Split(l, "|")
		for k := range cells {
			cells[k] = ansi.Strip(inline(strings.TrimSpace(cells[k]), mdText))
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, r := range rows {
		for k, c := range r {
			if k >= len(widths) {
				widths = append(widths, 0)
			}
			widths[k] = max(widths[k], ansi.StringWidth(c))
		}
	}
	total := 0
	for _, w := range widths {
		total += w + 3
	}
	if total > width+3 {
		var out []string
		for _, l := range lines {
			out = append(out, wrap(mdText.Render(strings.TrimSpace(l)), width)...)
		}
		return out
	}
	var out []string
	for j, r := range rows {
		cells := make([]string, len(widths))
		for k := range widths {
			c := ""
			if k < len(r) {
				c = r[k]
			}
			cells[k] = c + strings.Repeat(" ", widths[k]-ansi.StringWidth(c))
		}
		st := mdText
		if j == 0 {
			st = st.Bold(true)
		}
		out = append(out, st.Render(strings.TrimRight(strings.Join(cells, " │ "), " ")))
		if j == 0 {
			seps := make([]string, len(widths))
			for k, w := range widths {
				seps[k] = strings.Repeat("─", w)
			}
			out = append(out, mdDim.Render(strings.Join(seps, "─┼─")))
		}
	}
	return out
}

// wrap breaks styled text into lines of at most width columns.
func wrap(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, width, " -"), "\n")
}

func indent(lines []string, prefix string) []string {
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return lines
}

// inline draws a paragraph's text in base with its spans styled: `code`,
// **bold**, *italic*, ~~struck~~, [links](url) and <autolinks>, and
// backslash escapes. Every word is styled on its own, so that wrapping
// never carries a style across a line's end.
func inline(s string, base lipgloss.Style) string {
	var b strings.Builder
	emit := func(text string, st lipgloss.Style) {
		for k, w := range strings.Split(text, " ") {
			if k > 0 {
				b.WriteByte(' ')
			}
			if w != "" {
				b.WriteString(st.Render(w))
			}
		}
	}
	var plain strings.Builder
	flush := func(st lipgloss.Style) {
		if plain.Len() > 0 {
			emit(plain.String(), st)
			plain.Reset()
		}
	}
	bold, italic, strike := false, false, false
	style := func() lipgloss.Style {
		return base.Bold(bold || base.GetBold()).Italic(italic).Strikethrough(strike)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!|~<>", s[i+1]) >= 0:
			plain.WriteByte(s[i+1])
			i += 2
		case c == '`':
			n := runLen(s[i:], '`')
			end := strings.Index(s[i+n:], s[i:i+n])
			if end < 0 {
				plain.WriteString(s[i : i+n])
				i += n
				continue
			}
			flush(style())
			emit(strings.TrimSpace(s[i+n:i+n+end]), mdCode)
			i += 2*n + end
		case (c == '*' || c == '_') && runLen(s[i:], c) >= 2 && (bold || strings.Contains(s[i+2:], s[i:i+2])):
			flush(style())
			bold = !bold
			i += 2
		case (c == '*' || c == '_') && (italic || emphasisOpens(s, i)):
			flush(style())
			italic = !italic
			i++
		case c == '~' && runLen(s[i:], '~') == 2 && (strike || strings.Contains(s[i+2:], "~~")):
			flush(style())
			strike = !strike
			i += 2
		case c == '[':
			text, url, n := link(s[i:])
			if n == 0 {
				plain.WriteByte(c)
				i++
				continue
			}
			flush(style())
			emit(text, mdLink)
			if url != text && url != "" {
				emit(" ", style())
				emit(url, mdDim)
			}
			i += n
		case c == '<' && strings.Contains(s[i:], ">") && isAutolink(s[i+1:i+strings.IndexByte(s[i:], '>')]):
			end := i + strings.IndexByte(s[i:], '>')
			flush(style())
			emit(s[i+1:end], mdLink)
			i = end + 1
		default:
			plain.WriteByte(c)
			i++
		}
	}
	flush(style())
	return b.String()
}

// runLen counts the leading c of s.
func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// emphasisOpens reports whether the * or _ at s[i] opens emphasis: it is
// followed by text, not a space, an underscore is not inside a word
// (snake_case), and a closing one follows.
func emphasisOpens(s string, i int) bool {
	c := s[i]
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == c {
		return false
	}
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return false
	}
	return strings.IndexByte(s[i+1:], c) > 0
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// link parses [text](url) at the start of s: its text, URL and length, or
// n == 0 when s does not start with one.
func link(s string) (text, url string, n int) {
	close := strings.Index(s, "](")
	if close < 0 || strings.Contains(s[1:close], "\n") {
		return "", "", 0
	}
	end := strings.IndexByte(s[close:], ')')
	if end < 0 {
		return "", "", 0
	}
	text, url = s[1:close], s[close+2:close+end]
	if strings.ContainsAny(url, " ") && !strings.Contains(url, " \"") {
		return "", "", 0
	}
	if k := strings.Index(url, " \""); k >= 0 { // [text](url "title")
		url = url[:k]
	}
	return ansi.Strip(inline(text, mdText)), url, close + end + 1
}

func isAutolink(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "mailto:")
}
