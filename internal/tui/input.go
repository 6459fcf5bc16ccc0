package tui

import (
	"fmt"
	"io"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The input page is the interactive session's home: the conversation so
// far (questions, final answers, what commands printed) above a
// multi-line prompt. A turn's run view replaces it while the team works
// and until the user leaves the final answer with q.

// askMsg opens the prompt; what the user sends goes to reply.
type askMsg struct{ reply chan<- askReply }

type askReply struct {
	text string
	err  error // io.EOF: the user left (Ctrl+D or Ctrl+C at an empty prompt)
}

// noteMsg adds text to the conversation (what a command printed).
type noteMsg string

// pastMsg adds an earlier turn to the conversation (a resumed session).
type pastMsg struct{ question, answer string }

// clearMsg empties the conversation (/clear).
type clearMsg struct{}

type entryKind int

const (
	entryQuestion entryKind = iota
	entryAnswer
	entryNote
)

// entry is one block of the conversation. Answers are markdown, rendered
// once per width (markdown.go), not on every frame.
type entry struct {
	kind  entryKind
	text  string
	meta  string // answers: who and how
	width int
	lines []string
}

// inputKeys are the input page's own keys; the rest go to the textarea.
type inputKeys struct {
	Send, Newline, Quit, Up, Down key.Binding
}

func newInputKeys() inputKeys {
	return inputKeys{
		Send:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Newline: key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"), key.WithHelp("alt+enter", "newline")),
		Quit:    key.NewBinding(key.WithKeys("ctrl+d", "ctrl+c"), key.WithHelp("ctrl+d", "quit")),
		Up:      key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup/pgdn", "scroll")),
		Down:    key.NewBinding(key.WithKeys("pgdown")),
	}
}

func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "> "
	ta.Placeholder = `Ask the team a question (/help lists the commands)`
	ta.KeyMap.InsertNewline = newInputKeys().Newline
	// A steady cursor: a blinking one redraws the screen twice a second
	// and leaves a timer goroutine behind each blink.
	st := ta.Styles()
	st.Cursor.Blink = false
	ta.SetStyles(st)
	ta.SetHeight(1)
	ta.Focus()
	return ta
}

// onInput reports whether the input page is on screen.
func (m *model) onInput() bool { return m.opts.Interactive && !m.inRun }

// askUpdate handles the messages of an interactive session.
func (m *model) askUpdate(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case askMsg:
		m.reply, m.cancelEarly = msg.reply, false
		m.sizeInput()
		if m.typeAhead {
			m.typeAhead = false
			m.send()
		}
		return m.input.Focus()
	case noteMsg:
		m.conv = append(m.conv, entry{kind: entryNote, text: strings.TrimRight(string(msg), "\n")})
		m.convScroll = 0
	case pastMsg:
		m.conv = append(m.conv, entry{kind: entryQuestion, text: msg.question},
			entry{kind: entryAnswer, text: msg.answer, meta: "earlier turn"})
		m.turns++
	case clearMsg:
		m.conv, m.convScroll, m.turns = nil, 0, 0
	}
	return nil
}

// inputKey handles a key on the input page.
func (m *model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	keys := newInputKeys()
	switch {
	case key.Matches(k, keys.Quit) && m.reply == nil:
		// Nobody is asking: a turn is starting (its run view is not up
		// yet). Ctrl+C cancels it as soon as it is; the session stays.
		if k.String() == "ctrl+c" {
			m.cancelEarly = true
		}
		return nil
	case key.Matches(k, keys.Quit):
		if m.input.Value() != "" && k.String() == "ctrl+c" {
			m.input.Reset() // Ctrl+C drops what was typed, as a shell does
			m.sizeInput()
			return nil
		}
		if m.input.Value() == "" {
			m.answer(askReply{err: io.EOF})
			return tea.Quit
		}
	case key.Matches(k, keys.Up):
		h := m.convHeight()
		m.convScroll = min(m.convScroll+h, max(0, len(m.convLines())-h))
		return nil
	case key.Matches(k, keys.Down):
		m.convScroll = max(0, m.convScroll-m.convHeight())
		return nil
	case key.Matches(k, keys.Send):
		if openBlock(m.input.Value()) {
			return m.edit(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}) // a newline, as alt+enter
		}
		if m.reply == nil {
			// Typed ahead, while a command or a turn's start is under
			// way: sent as soon as the prompt opens.
			m.typeAhead = strings.TrimSpace(m.input.Value()) != ""
			return nil
		}
		m.send()
		return nil
	}
	return m.edit(k)
}

// send gives the prompt's text to the waiting Ask (blank text is not
// sent) and shows it in the conversation.
func (m *model) send() {
	text := unblock(m.input.Value())
	if strings.TrimSpace(text) == "" {
		return
	}
	m.conv = append(m.conv, entry{kind: entryQuestion, text: strings.TrimSpace(text)})
	m.convScroll = 0
	m.input.Reset()
	m.sizeInput()
	m.answer(askReply{text: text})
}

// edit passes a key or a paste to the textarea. It gets a line more room
// first: grown only afterwards, it would have scrolled its first line out
// of sight to make room for a new one.
func (m *model) edit(msg tea.Msg) tea.Cmd {
	m.input.SetHeight(min(m.input.LineCount()+1, m.maxInput()))
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	m.sizeInput()
	return cmd
}

// answer sends the user's reply to the waiting Ask, once.
func (m *model) answer(r askReply) {
	if m.reply != nil {
		m.reply <- r // buffered: Ask may have given up already
		m.reply = nil
	}
}

// openBlock reports whether v starts a """ or ”' block that is not closed
// yet: Enter then adds a line instead of sending.
func openBlock(v string) bool {
	t := strings.TrimSpace(v)
	for _, d := range []string{`"""`, `'''`} {
		if strings.HasPrefix(t, d) {
			return len(t) < 2*len(d) || !strings.HasSuffix(t, d)
		}
	}
	return false
}

// unblock strips a closed block's delimiters.
func unblock(v string) string {
	t := strings.TrimSpace(v)
	for _, d := range []string{`"""`, `'''`} {
		if strings.HasPrefix(t, d) && strings.HasSuffix(t, d) && len(t) >= 2*len(d) {
			return strings.Trim(t[len(d):len(t)-len(d)], "\n")
		}
	}
	return v
}

// sizeInput fits the textarea to the screen and to its text: one line
// to begin with, growing to a third of the screen.
func (m *model) sizeInput() {
	m.input.SetWidth(m.width)
	m.input.SetHeight(min(max(1, m.input.LineCount()), m.maxInput()))
}

func (m *model) maxInput() int { return max(1, m.height/3) }

// convHeight is the conversation's share of the input page.
func (m *model) convHeight() int {
	return max(1, m.height-headerLines-footerLines-1-m.input.Height())
}

// inputPage draws the conversation, a rule and the prompt.
func (m *model) inputPage() []string {
	top := stTitle.Render(fit(" MassGen · interactive · "+plural(m.turns, "turn"), m.width))
	sub := stDim.Render("The team answers each question with the earlier turns as history.")
	lines := []string{top, sub}
	conv := m.convLines()
	title := ""
	if m.convScroll > 0 {
		title = stDim.Render(fmt.Sprintf(" ↑%d", m.convScroll))
	}
	lines = append(lines, window(conv, m.convHeight(), m.convScroll, true)...)
	lines = append(lines, stDim.Render(strings.Repeat("─", max(0, m.width-ansi.StringWidth(title))))+title)
	lines = append(lines, strings.Split(m.input.View(), "\n")...)
	if m.reply == nil {
		return append(lines, stDim.Render("working… · ctrl+c cancels the turn"))
	}
	return append(lines, stDim.Render(`enter send · alt+enter newline · pgup/pgdn scroll · /help · ctrl+d quit`))
}

// convLines is the whole conversation, wrapped to the screen.
func (m *model) convLines() []string {
	if len(m.conv) == 0 {
		return wrapLines("No questions yet. Type one below and press Enter; /help lists the commands.", m.width)
	}
	var out []string
	for i := range m.conv {
		e := &m.conv[i]
		if i > 0 {
			out = append(out, "")
		}
		switch e.kind {
		case entryQuestion:
			for j, l := range wrapLines(e.text, m.width-5) {
				p := "     "
				if j == 0 {
					p = stAccent.Render("you> ")
				}
				out = append(out, p+l)
			}
		case entryAnswer:
			out = append(out, stWinner.Render("massgen")+stDim.Render(" · "+e.meta))
			if e.width != m.width || e.lines == nil {
				var md mdCache
				e.lines, e.width = strings.Split(strings.TrimRight(md.render(e.text, m.width), "\n "), "\n"), m.width
			}
			out = append(out, e.lines...)
		case entryNote:
			out = append(out, wrapLines(e.text, m.width)...)
		}
	}
	return out
}

// finishTurn adds a finished run's answer to the conversation.
func (m *model) finishTurn() {
	s := &m.snap
	m.turns++
	text := s.Final
	meta := s.Status
	if s.FinalAgent != "" {
		meta = "by " + s.FinalAgent
		if s.How != "" {
			meta += " (" + s.How + ")"
		}
	}
	if !s.StartedAt.IsZero() && !s.FinishedAt.IsZero() {
		meta += " · " + clock(s.FinishedAt.Sub(s.StartedAt))
	}
	meta += fmt.Sprintf(" · $%.4f", s.Usage.CostUSD)
	if text == "" {
		text = "The run ended without a final answer (" + s.Status + ")."
		if s.Err != "" {
			text += "\n\n" + s.Err
		}
	}
	m.conv = append(m.conv, entry{kind: entryAnswer, text: text, meta: meta})
	m.convScroll = 0
}

// plural is "1 turn", "2 turns".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
