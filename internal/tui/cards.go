package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/massgen/massgen/internal/event"
)

// Card geometry: a bordered card needs this much room; below it every
// agent gets one compact line instead (16 agents fit at 80×24 that way).
const (
	cardMinWidth    = 26
	cardMinHeight   = 5 // border, model line, status line, one line of text
	cardMaxHeight   = 12
	compactMinWidth = 38
)

// cards draws the agents in at most w×h: a grid of bordered cards when
// they fit, else compact one-line rows in columns, scrolled to keep the
// selected agent in sight. It returns only the lines it needs, so the
// caller can give the rest of the screen to the timeline.
func (m *model) cards(w, h int) []string {
	agents := m.snap.Agents
	n := len(agents)
	if n == 0 {
		return []string{stDim.Render("waiting for the team…")}
	}
	cols := min(n, max(1, w/cardMinWidth))
	rows := (n + cols - 1) / cols
	if cardH := h / rows; cardH >= cardMinHeight {
		return m.cardGrid(w, h, cols, rows, min(cardH, cardMaxHeight))
	}
	return m.compact(w, h)
}

func (m *model) cardGrid(w, h, cols, rows, cardH int) []string {
	agents := m.snap.Agents
	widths := make([]int, cols)
	for i := range widths {
		widths[i] = w / cols
		if i < w%cols {
			widths[i]++
		}
	}
	var out []string
	for r := range rows {
		blocks := make([][]string, cols)
		for c := range cols {
			i := r*cols + c
			if i < len(agents) {
				blocks[c] = m.card(agents[i], i == m.sel, widths[c], cardH)
			}
		}
		out = append(out, joinColumns(blocks, widths)...)
	}
	return out[:min(len(out), h)]
}

// card is one agent: model, status and counts, its recent tool call, and
// the tail of the text it is streaming.
func (m *model) card(ag event.AgentView, selected bool, w, h int) []string {
	inner := w - 2
	border := stDim
	title := ag.ID
	if selected {
		border = lipgloss.NewStyle().Foreground(colAccent).Bold(true)
		title = "▶ " + ag.ID
	}
	body := []string{
		stDim.Render(modelName(ag.AgentInfo)),
		statusStyle(ag.Status).Render(statusWord(ag)) + stDim.Render(" · "+m.agentCounts(ag)),
	}
	room := h - 2 - len(body)
	a := m.agents[ag.ID]
	if a != nil && len(a.tools) > 0 && room > 1 {
		body = append(body, stDim.Render(a.tools[len(a.tools)-1]))
		room--
	}
	if ag.LastError != "" && ag.Status != event.StatusWorking && room > 1 {
		body = append(body, statusStyle("failed").Render(oneLine(ag.LastError)))
		room--
	}
	if a != nil && room > 0 {
		body = append(body, tail(a.current(), inner, room)...)
	}
	return box(title, body, w, h, border)
}

// tail is the last n screen lines of text wrapped to w.
func tail(text string, w, n int) []string {
	lines := wrapLines(strings.TrimLeft(text, "\n"), w)
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// compact draws one line per agent, in as many columns as fit.
func (m *model) compact(w, h int) []string {
	agents := m.snap.Agents
	cols := max(1, min(len(agents), w/compactMinWidth))
	rows := (len(agents) + cols - 1) / cols
	widths := make([]int, cols)
	for i := range widths {
		widths[i] = w / cols
	}
	// Column-major, so Tab moves down a column as the eye reads.
	blocks := make([][]string, cols)
	for i, ag := range agents {
		blocks[i/rows] = append(blocks[i/rows], m.compactLine(ag, i == m.sel, widths[i/rows]-1))
	}
	lines := joinColumns(blocks, widths)
	if rows <= h {
		return lines
	}
	// More rows than room: the last line says how many are hidden, and the
	// window keeps the selected agent's row in sight.
	shown := max(1, h-1)
	off := min(max(0, m.sel%rows-shown+1), rows-shown)
	out := window(lines, shown, off, false)
	if h > 1 {
		out = append(out, stDim.Render(fmt.Sprintf(" … %d rows above, %d below (tab moves)", off, rows-off-shown)))
	}
	return out
}

// compactLine: "▶ id status · counts  model  text…".
func (m *model) compactLine(ag event.AgentView, selected bool, w int) string {
	mark := "  "
	if selected {
		mark = stAccent.Render("▶ ")
	}
	line := mark + stBold.Render(ag.ID) + " " + statusStyle(ag.Status).Render(statusWord(ag))
	if ag.Answers > 0 {
		line += stDim.Render(fmt.Sprintf(" %d ans", ag.Answers))
	}
	if a := m.agents[ag.ID]; a != nil {
		if t := tail(a.current(), 1<<20, 1); len(t) > 0 {
			line += " " + stDim.Render(oneLine(t[0]))
		}
	}
	return fit(line, w)
}
