package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/massgen/massgen/internal/event"
)

// Limits on what the model keeps, so a long run costs bounded memory.
const (
	maxTimeline   = 500     // timeline entries
	maxTranscript = 1 << 16 // bytes of streamed text kept per agent
	maxTools      = 8       // recent tool calls kept per agent
)

// page is what fills the screen below the header.
type page int

const (
	pageMain page = iota
	pageAgent
	pageTable
	pageVotes
	pageHelp
)

// batchMsg carries what the pump read since the last frame: the events in
// order and the run view as of now. Snapshots come from the shared
// event.View, so the display never re-derives statuses, tallies or usage.
type batchMsg struct {
	events []event.Event
	snap   event.Snapshot
	now    time.Time
}

// runMsg announces a run (Follow sends it first).
type runMsg Run

// endMsg says the run's event stream has ended (the broker closed).
type endMsg struct{}

// agentState is what the display keeps of one agent beyond the snapshot:
// its streamed text and its recent tool calls.
type agentState struct {
	transcript []byte   // all its text, bounded (the full-screen page)
	tools      []string // recent tool calls, newest last
	running    string   // the tool whose progress line is the last of tools ("" when none)
	answering  bool     // the turn's answer is streaming (as new_answer's arguments)
	// streamed counts the bytes streamed since the agent's usage last
	// changed (usage comes once a turn ends): a card shows the tokens
	// growing with an estimate of them.
	streamed int
	usageAt  int64 // the agent's tokens when streamed was last reset
}

// model is the Bubble Tea model. Everything it draws comes from messages,
// time included (batchMsg.now), so a test drives it without a terminal.
type model struct {
	opts          Options
	run           Run
	width, height int
	snap          event.Snapshot
	now           time.Time
	agents        map[string]*agentState
	timeline      []string
	sel           int // selected agent (index in snap.Agents)
	page          page
	scroll        int  // lines: from the bottom on follow pages, else from the top
	finished      bool // RunFinished seen
	ended         bool // the event stream ended
	quitEarly     bool // the user left before the run finished
	confirmQuit   bool // q was pressed mid-run: the footer asks before cancelling
	keys          keyMap
	help          help.Model
	md            mdCache

	// An interactive session (Options.Interactive).
	inRun       bool            // the run view is on screen (else the input page)
	cancelled   bool            // the user cancelled the current turn
	typeAhead   bool            // Enter was pressed before the prompt opened
	cancelEarly bool            // Ctrl+C came while the turn started, before its run view
	reply       chan<- askReply // the waiting Ask, nil when none waits
	input       textarea.Model  // the prompt
	conv        []entry         // the conversation so far
	convScroll  int             // lines from the bottom
	turns       int             // turns finished on this display
}

func newModel(opts Options) *model {
	h := help.New()
	h.Styles = help.DefaultDarkStyles()
	m := &model{opts: opts, width: 80, height: 24, agents: map[string]*agentState{}, keys: newKeyMap(), help: h, input: newInput()}
	if opts.Interactive {
		m.keys.Quit.SetHelp("ctrl+c", "cancel turn")
	}
	m.sizeInput()
	return m
}

func (m *model) Init() tea.Cmd { return nil }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
		m.sizeInput()
	case batchMsg:
		m.snap, m.now = msg.snap, msg.now
		for _, e := range msg.events {
			m.apply(e)
		}
		for _, ag := range m.snap.Agents {
			if a := m.agents[ag.ID]; a != nil {
				if t := ag.Usage.InputTokens + ag.Usage.OutputTokens; t != a.usageAt {
					a.usageAt, a.streamed = t, 0 // counted now
				}
			}
		}
	case runMsg:
		m.run = Run(msg)
		m.ended, m.cancelled = false, false
		m.inRun = m.opts.Interactive
		if m.cancelEarly { // Ctrl+C while the turn was starting
			m.cancelEarly, m.cancelled = false, true
			if m.run.Cancel != nil {
				m.run.Cancel()
			}
		}
	case endMsg:
		m.ended = true
		if m.opts.ExitAtEnd {
			return m, tea.Quit
		}
		if m.cancelled {
			m.inRun = false // a cancelled turn goes straight back to the prompt
		}
	case askMsg, noteMsg, pastMsg, clearMsg:
		return m, m.askUpdate(msg)
	case tea.PasteMsg:
		if m.onInput() {
			return m, m.edit(msg)
		}
	case tea.KeyPressMsg:
		if m.onInput() {
			return m, m.inputKey(msg)
		}
		return m, m.key(msg)
	}
	return m, nil
}

// key handles one key press; the returned command quits or is nil.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	n := len(m.snap.Agents)
	if m.opts.Interactive {
		if done := m.finished || m.ended; key.Matches(k, m.keys.Quit) || (done && m.page == pageMain && key.Matches(k, m.keys.Back)) {
			switch {
			case done:
				m.inRun = false // back to the conversation
			case k.String() == "ctrl+c" && !m.cancelled:
				// Ctrl+C cancels the turn, not the session; q does
				// nothing until the end.
				m.cancelled = true
				if m.run.Cancel != nil {
					m.run.Cancel()
				}
			}
			return nil
		}
	}
	if m.confirmQuit {
		// The footer asked whether to cancel the run: q or y does, any
		// other key keeps it going (and is not acted upon).
		m.confirmQuit = false
		if s := k.String(); s != "q" && s != "y" && s != "ctrl+c" {
			return nil
		}
	} else if k.String() == "q" && !m.finished && !m.ended {
		m.confirmQuit = true
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		if !m.finished {
			// Leaving mid-run cancels the run: the CLI then finishes the
			// logs and exits as an interrupt does.
			m.quitEarly = true
			if m.opts.Cancel != nil {
				m.opts.Cancel()
			}
		}
		return tea.Quit
	case key.Matches(k, m.keys.Back):
		m.setPage(pageMain)
	case key.Matches(k, m.keys.Next) && n > 0:
		m.sel = (m.sel + 1) % n
		m.scroll = 0
	case key.Matches(k, m.keys.Prev) && n > 0:
		m.sel = (m.sel + n - 1) % n
		m.scroll = 0
	case key.Matches(k, m.keys.Open) && n > 0:
		m.setPage(pageAgent)
	case key.Matches(k, m.keys.Table):
		m.toggle(pageTable)
	case key.Matches(k, m.keys.Votes):
		m.toggle(pageVotes)
	case key.Matches(k, m.keys.Help):
		m.toggle(pageHelp)
	case key.Matches(k, m.keys.Up):
		m.scrollBy(1)
	case key.Matches(k, m.keys.Down):
		m.scrollBy(-1)
	case key.Matches(k, m.keys.PageUp):
		m.scrollBy(m.bodyHeight())
	case key.Matches(k, m.keys.PageDown):
		m.scrollBy(-m.bodyHeight())
	}
	return nil
}

func (m *model) setPage(p page) { m.page, m.scroll = p, 0 }

func (m *model) toggle(p page) {
	if m.page == p {
		p = pageMain
	}
	m.setPage(p)
}

// scrollBy moves the view by up lines towards older content. Pages that
// follow new content (the timeline, an agent's text) count from the
// bottom; the others from the top. Drawing clamps the offset.
func (m *model) scrollBy(up int) {
	if !m.followsBottom() {
		up = -up
	}
	m.scroll = max(0, m.scroll+up)
}

// followsBottom reports whether the current page shows its newest lines
// by default.
func (m *model) followsBottom() bool {
	switch m.page {
	case pageAgent:
		return true
	case pageMain:
		return !m.finished // the timeline; at the end, the final answer reads from the top
	}
	return false
}

func (m *model) agent(id string) *agentState {
	a := m.agents[id]
	if a == nil {
		a = &agentState{}
		m.agents[id] = a
	}
	return a
}

// apply records what the snapshot does not keep: streamed text, tool
// calls and the timeline.
func (m *model) apply(e event.Event) {
	switch e := e.(type) {
	case event.RunStarted:
		// A new run on the same display (the next turn of a session).
		clear(m.agents)
		m.timeline, m.finished, m.sel = nil, false, 0
		m.setPage(pageMain)
	case event.TurnStarted:
		a := m.agent(e.Agent)
		a.answering = false
		a.append("\n" + turnMark + "\n")
	case event.TextDelta:
		a := m.agent(e.Agent)
		if e.Tool != "" && !a.answering {
			// The answer streams as the arguments of new_answer: set
			// apart from what the model wrote before it.
			a.answering = true
			a.append("\n" + answerMark + "\n")
		}
		a.stream(e.Text)
	case event.ReasoningDelta:
		m.agent(e.Agent).stream(e.Text)
	case event.AnswerAccepted:
		// The agent page tells the turn's outcome: the answer (its text
		// already above when it streamed) and its labels.
		a := m.agent(e.Agent)
		if !a.answering {
			a.append("\n" + answerMark + "\n" + e.Content)
		}
		a.answering = false
		a.append(fmt.Sprintf("\n✓ answer accepted as %s (shown to the others as %s)\n", e.Label, e.AnonLabel))
	case event.VoteAccepted:
		line := fmt.Sprintf("✓ vote for %s (%s's %s)", e.TargetLabel, e.Target, e.TargetAnswer)
		if e.Reason != "" {
			line += ": " + e.Reason
		}
		m.agent(e.Agent).append("\n" + line + "\n")
	case event.ActionRejected:
		a := m.agent(e.Agent)
		a.answering = false
		a.append("\n✗ refused: " + e.Reason + "\n")
	case event.FinalStarted:
		m.agent(e.Agent).append("\n" + finalMark + "\n")
	case event.FinalDelta:
		m.agent(e.Agent).stream(e.Text)
	case event.ToolProgress:
		// The card's tool line follows the tool while it runs: one line,
		// replaced by each tick, then by the call's outcome.
		a := m.agent(e.Agent)
		line := "⚙ " + oneLine(strings.TrimPrefix(event.Describe(e), e.Agent+": "))
		if a.running == e.Tool && len(a.tools) > 0 {
			a.tools[len(a.tools)-1] = line
		} else {
			a.tools, a.running = append(a.tools, line), e.Tool
		}
	case event.ToolCalled:
		a := m.agent(e.Agent)
		outcome := "ok"
		if e.IsError {
			outcome = "error"
		}
		line := "⚙ " + e.Tool + " " + outcome
		if a.running == e.Tool && len(a.tools) > 0 {
			a.tools = a.tools[:len(a.tools)-1] // its progress line
		}
		a.running = ""
		a.tools = append(a.tools, line)
		if len(a.tools) > maxTools {
			a.tools = a.tools[len(a.tools)-maxTools:]
		}
		a.append("\n" + line + "\n")
	case event.RunFinished:
		m.finished = true
		if m.opts.Interactive {
			// The answer goes into the conversation and the prompt takes
			// the keys at once: what the user types next is the next
			// question (or a /command), not the run view's hotkeys.
			m.finishTurn()
			m.inRun = false
		}
		if m.page == pageMain {
			m.scroll = 0
		}
	}
	if e.Type().Droppable() || e.Type() == event.TypeTurnEnded {
		return
	}
	if text := timelineText(e); text != "" {
		at := e.Head().Time.Sub(m.snap.StartedAt)
		m.timeline = append(m.timeline, fmt.Sprintf("%6s %s", clock(at), oneLine(text)))
		if len(m.timeline) > maxTimeline {
			m.timeline = m.timeline[len(m.timeline)-maxTimeline:]
		}
	}
}

// timelineText is an event's timeline entry: event.Describe's sentence,
// with a vote's or a refusal's whole reason (Describe clips it for one
// line; the timeline wraps instead), up to maxReason runes.
func timelineText(e event.Event) string {
	const maxReason = 600
	reason := func(s string) string {
		if r := []rune(s); len(r) > maxReason {
			return string(r[:maxReason-1]) + "…"
		}
		return s
	}
	switch e := e.(type) {
	case event.VoteAccepted:
		why := e.Reason
		e.Reason = ""
		if s := event.Describe(e); why != "" {
			return s + ": " + reason(why)
		}
		return event.Describe(e)
	case event.ActionRejected:
		return e.Agent + ": action rejected: " + reason(e.Reason)
	}
	return event.Describe(e)
}

func (a *agentState) stream(text string) {
	a.streamed += len(text)
	a.append(text)
}

// Marks in a transcript where a turn or the final answer begins: a card
// shows the text since the latest one.
const (
	turnMark   = "── turn ──"
	finalMark  = "── final answer ──"
	answerMark = "✎ new_answer:"
)

// current is the text since the agent's latest turn began, at most the
// last 2 KB (a card shows a few lines of it).
func (a *agentState) current() string {
	s := a.transcript[max(0, len(a.transcript)-2048):]
	str := string(s)
	if i := max(strings.LastIndex(str, turnMark), strings.LastIndex(str, finalMark)); i >= 0 {
		str = str[i:]
		if j := strings.IndexByte(str, '\n'); j >= 0 {
			str = str[j+1:]
		} else {
			str = ""
		}
	}
	return str
}

// append adds to the transcript, keeping its last maxTranscript bytes;
// it trims only past twice that, so the copy is amortised over many deltas.
func (a *agentState) append(text string) {
	a.transcript = append(a.transcript, text...)
	if len(a.transcript) > 2*maxTranscript {
		n := copy(a.transcript, a.transcript[len(a.transcript)-maxTranscript:])
		a.transcript = a.transcript[:n]
	}
}

// text is the kept transcript, from a line start when it was trimmed.
func (a *agentState) text() string {
	s := string(a.transcript)
	if len(s) > maxTranscript {
		s = s[len(s)-maxTranscript:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}

// clock formats a time since the run started: "12.3s", "2m05s".
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	sec := int(d.Seconds())
	return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
