package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Colours and styles. The model renders in full colour; Bubble Tea (or a
// test) downsamples to the terminal's profile, down to no colour at all.
var (
	colWorking   = lipgloss.Color("#E5C07B")
	colAnswered  = lipgloss.Color("#98C379")
	colVoted     = lipgloss.Color("#56B6C2")
	colRestarted = lipgloss.Color("#C678DD")
	colFailed    = lipgloss.Color("#E06C75")
	colStalled   = lipgloss.Color("#D19A66")
	colPresent   = lipgloss.Color("#61AFEF")
	colDim       = lipgloss.Color("#7F848E")
	colAccent    = lipgloss.Color("#61AFEF")

	stTitle  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(lipgloss.Color("#3E4451"))
	stDim    = lipgloss.NewStyle().Foreground(colDim)
	stBold   = lipgloss.NewStyle().Bold(true)
	stAccent = lipgloss.NewStyle().Foreground(colAccent).Bold(true)
	stBar    = lipgloss.NewStyle().Foreground(colVoted)
	stWinner = lipgloss.NewStyle().Foreground(colAnswered).Bold(true)
)

// statusStyle colours an agent status word.
func statusStyle(status string) lipgloss.Style {
	c := colDim
	switch status {
	case "working":
		c = colWorking
	case "answered":
		c = colAnswered
	case "voted":
		c = colVoted
	case "restarted":
		c = colRestarted
	case "failed", "interrupted":
		c = colFailed
	case "stalled":
		c = colStalled
	case "presenting":
		c = colPresent
	}
	return lipgloss.NewStyle().Foreground(c)
}

// fit makes s exactly w cells wide: cut with an ellipsis, or padded.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrapLines wraps plain text to w cells, one element per screen line.
func wrapLines(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	text = strings.ReplaceAll(text, "\t", "    ")
	text = strings.ReplaceAll(text, "\r", "")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			out = append(out, "")
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(line, w, " -"), "\n")...)
	}
	return out
}

// window returns h lines of lines, scrolled: fromBottom counts the offset
// from the end (newest content), else from the start. The offset is
// clamped, and the lines are padded to h.
func window(lines []string, h, offset int, fromBottom bool) []string {
	if h <= 0 {
		return nil
	}
	maxOff := max(0, len(lines)-h)
	offset = min(max(offset, 0), maxOff)
	start := offset
	if fromBottom {
		start = maxOff - offset
	}
	out := append([]string(nil), lines[start:min(len(lines), start+h)]...)
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// box draws a bordered box w×h with title in the top border and body
// lines inside (cut or padded to fit).
func box(title string, body []string, w, h int, border lipgloss.Style) []string {
	if w < 4 || h < 2 {
		return nil
	}
	inner := w - 2
	t := ""
	if title != "" {
		t = " " + ansi.Truncate(title, max(0, inner-3), "…") + " "
	}
	top := "┌─" + t
	top += strings.Repeat("─", max(0, w-1-ansi.StringWidth(top))) + "┐"
	lines := []string{border.Render(top)}
	for i := range h - 2 {
		line := ""
		if i < len(body) {
			line = body[i]
		}
		lines = append(lines, border.Render("│")+fit(line, inner)+border.Render("│"))
	}
	return append(lines, border.Render("└"+strings.Repeat("─", inner)+"┘"))
}

// joinColumns puts blocks of lines side by side, each padded to its width.
func joinColumns(blocks [][]string, widths []int) []string {
	h := 0
	for _, b := range blocks {
		h = max(h, len(b))
	}
	out := make([]string, h)
	for i := range h {
		var sb strings.Builder
		for j, b := range blocks {
			line := ""
			if i < len(b) {
				line = b[i]
			}
			sb.WriteString(fit(line, widths[j]))
		}
		out[i] = sb.String()
	}
	return out
}
