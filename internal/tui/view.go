package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/massgen/massgen/internal/event"
)

// Screen furniture: two header lines, one footer line.
const (
	headerLines = 2
	footerLines = 1
	sideWidth   = 46  // the votes and timeline column on wide screens
	wideFrom    = 120 // screens at least this wide put that column beside the cards
)

func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "massgen"
	return v
}

// render draws the whole screen: exactly height lines of width cells.
func (m *model) render() string {
	if m.onInput() {
		lines := m.inputPage()
		for i := range lines {
			lines[i] = fit(lines[i], m.width)
		}
		return strings.Join(lines, "\n")
	}
	lines := m.header()
	body := m.bodyHeight()
	switch m.page {
	case pageAgent:
		lines = append(lines, m.agentPage(body)...)
	case pageTable:
		lines = append(lines, window(m.tableLines(), body, m.scroll, false)...)
	case pageVotes:
		lines = append(lines, window(m.voteLines(m.width), body, m.scroll, false)...)
	case pageHelp:
		lines = append(lines, window(m.helpLines(), body, m.scroll, false)...)
	default:
		if m.finished {
			lines = append(lines, m.endPage(body)...)
		} else {
			lines = append(lines, m.livePage(body)...)
		}
	}
	lines = append(lines, m.footer())
	for i := range lines {
		lines[i] = fit(lines[i], m.width)
	}
	return strings.Join(lines, "\n")
}

func (m *model) bodyHeight() int { return max(1, m.height-headerLines-footerLines) }

// header: the run's state on one line, the question on the next.
func (m *model) header() []string {
	s := &m.snap
	state := s.Phase
	if m.finished {
		state = s.Status
	}
	parts := []string{"MassGen", state}
	if s.Attempt > 1 {
		parts = append(parts, fmt.Sprintf("attempt %d", s.Attempt))
	}
	parts = append(parts, m.elapsed(), fmt.Sprintf("%s tok", thousands(s.Usage.InputTokens+s.Usage.OutputTokens)),
		fmt.Sprintf("$%.4f", s.Usage.CostUSD))
	top := stTitle.Render(fit(" "+strings.Join(parts, " · "), m.width))
	q := stBold.Render("Q: ") + oneLine(s.Question)
	return []string{top, q}
}

// elapsed is the run's time against its deadline: "12.3s / 2m00s".
func (m *model) elapsed() string {
	s := &m.snap
	if s.StartedAt.IsZero() {
		return "starting"
	}
	end := m.now
	if !s.FinishedAt.IsZero() {
		end = s.FinishedAt
	}
	e := clock(end.Sub(s.StartedAt))
	if m.run.Timeout > 0 {
		e += " / " + clock(m.run.Timeout)
	}
	return e
}

func (m *model) footer() string {
	m.help.SetWidth(m.width)
	if m.confirmQuit {
		return stAccent.Render("Cancel the run? q/y cancels it (the logs are kept; massgen --continue resumes) · any other key goes on")
	}
	switch m.page {
	case pageMain:
		if m.finished && m.opts.Interactive {
			return stDim.Render("q back to the conversation · ↑↓ pgup/pgdn scroll · tab/enter agents · r table · v votes")
		}
		if m.finished {
			return stDim.Render("q exit · ↑↓ pgup/pgdn scroll · tab/enter agents · r table · v votes · ? help")
		}
		return m.help.ShortHelpView(m.keys.ShortHelp())
	case pageAgent:
		return stDim.Render("esc back · tab/shift+tab other agent · ↑↓ pgup/pgdn scroll · q quit")
	}
	return stDim.Render("esc back · ↑↓ pgup/pgdn scroll · q quit")
}

// livePage: the cards, then (or beside them on wide screens) the vote
// tally and the timeline.
func (m *model) livePage(h int) []string {
	if m.width >= wideFrom {
		cw := m.width - sideWidth - 1
		votes := m.tallyLines(sideWidth)
		vh := min(len(votes), h/2)
		side := append(window(votes, vh, 0, false), m.timelineLines(sideWidth, h-vh)...)
		return joinColumns([][]string{window(m.cards(cw, h), h, 0, false), {}, side}, []int{cw, 1, sideWidth})
	}
	votes := m.tallyLines(m.width)
	cardsH := max(3, h*3/5)
	if len(m.snap.Agents) <= 4 && h-cardsH > 10 {
		cardsH = h - 10
	}
	out := m.cards(m.width, cardsH)
	rest := h - len(out)
	vh := min(len(votes), max(0, rest/2))
	out = append(out, window(votes, vh, 0, false)...)
	return append(out, m.timelineLines(m.width, rest-vh)...)
}

// timelineLines: a title and the newest events that fit, scrollable.
func (m *model) timelineLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	title := stAccent.Render("Timeline")
	if m.scroll > 0 {
		title += stDim.Render(fmt.Sprintf(" (↑%d)", m.scroll))
	}
	// Entries wrap, under their text rather than their time: a vote's or
	// a refusal's reason is what the line is for.
	const indent = 7 // "%6s " of the time
	var lines []string
	for _, t := range m.timeline {
		head, rest := t, ""
		if wl := wrapLines(t, w); len(wl) > 1 && strings.HasPrefix(t, wl[0]) {
			head = wl[0]
			rest = strings.TrimSpace(t[len(head):])
		}
		lines = append(lines, fit(head, w))
		if rest != "" {
			for _, l := range wrapLines(rest, max(1, w-indent)) {
				lines = append(lines, fit(strings.Repeat(" ", indent)+l, w))
			}
		}
	}
	return append([]string{title}, window(lines, h-1, m.scroll, true)...)
}

// endPage: the final answer as markdown, then the vote tally.
func (m *model) endPage(h int) []string {
	s := &m.snap
	votes := m.tallyLines(m.width)
	vh := min(len(votes), h/3)
	title := stAccent.Render("Final answer")
	if s.FinalAgent != "" {
		title += stDim.Render(" by " + s.FinalAgent)
	}
	if s.How != "" {
		title += stDim.Render(" (" + s.How + ")")
	}
	text := m.finalLines()
	th := min(len(text)+1, h-1-vh) // the tally right below a short answer
	out := append([]string{title}, window(text, th, m.scroll, false)...)
	out = append(out, window(votes, vh, 0, false)...)
	return window(out, h, 0, false)
}

// finalLines is the final answer rendered as markdown, or why there is
// none.
func (m *model) finalLines() []string {
	s := &m.snap
	if s.Final == "" {
		why := "The run ended without a final answer (" + s.Status + ")."
		if s.Err != "" {
			why += "\n" + s.Err
		}
		return wrapLines(why, m.width)
	}
	return strings.Split(m.md.render(s.Final, m.width), "\n")
}

// agentPage: one agent full screen, its whole kept transcript.
func (m *model) agentPage(h int) []string {
	if len(m.snap.Agents) == 0 {
		return window(nil, h, 0, false)
	}
	ag := m.snap.Agents[min(m.sel, len(m.snap.Agents)-1)]
	title := stAccent.Render(ag.ID) + " " + stDim.Render(modelName(ag.AgentInfo)) + " " +
		statusStyle(ag.Status).Render(ag.Status) + stDim.Render(" · "+m.agentCounts(ag))
	text := ""
	if a := m.agents[ag.ID]; a != nil {
		text = strings.TrimLeft(a.text(), "\n")
	}
	return append([]string{title}, window(wrapLines(text, m.width), h-1, m.scroll, true)...)
}

func (m *model) helpLines() []string {
	m.help.SetWidth(m.width)
	lines := []string{stAccent.Render("Keys"), ""}
	lines = append(lines, strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n")...)
	if m.opts.Interactive {
		return append(lines, "",
			"Ctrl+C before the turn ends cancels it (it is kept as interrupted); the session goes on.",
			"After the final answer, q returns to the conversation and its prompt.")
	}
	return append(lines, "",
		"Leaving with q before the run ends cancels it: the logs are kept and massgen exits 4.",
		"After the final answer, q exits and prints the answer to the terminal.")
}

// thousands writes n with thin separators: 12,345.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// modelName is "model [sim]" for an agent's card.
func modelName(a event.AgentInfo) string {
	name := a.Model
	if name == "" {
		name = a.Backend
	}
	if a.Simulated {
		name += " [sim]"
	}
	return name
}

// agentCounts sums an agent up: answers, tools, restarts, failures,
// tokens. While it streams and its usage is not in yet (usage comes when
// a turn ends), the tokens are estimated from what it streamed: "~1,234 tok".
func (m *model) agentCounts(ag event.AgentView) string {
	streamed := 0
	if a := m.agents[ag.ID]; a != nil {
		streamed = a.streamed
	}
	return agentCounts(ag, streamed)
}

func agentCounts(ag event.AgentView, streamed int) string {
	parts := []string{fmt.Sprintf("%d ans", ag.Answers)}
	if ag.ToolCalls > 0 {
		parts = append(parts, plural(ag.ToolCalls, "tool"))
	}
	if ag.Restarts > 0 {
		parts = append(parts, plural(ag.Restarts, "restart"))
	}
	if ag.Failures > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", ag.Failures))
	}
	t := ag.Usage.InputTokens + ag.Usage.OutputTokens
	switch {
	case streamed > 0:
		// About four bytes a token, as tokens.go of the simulator and
		// most tokenizers on English text.
		parts = append(parts, "~"+thousands(t+int64(max(1, streamed/4)))+" tok")
	case t > 0:
		parts = append(parts, thousands(t)+" tok")
	}
	return strings.Join(parts, " · ")
}

// statusWord is the status a card shows, with how long a stall has lasted.
func statusWord(ag event.AgentView) string {
	if ag.Status == event.StatusStalled {
		return fmt.Sprintf("stalled %s", clock(time.Duration(ag.StalledSeconds*float64(time.Second))))
	}
	return ag.Status
}
