package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/massgen/massgen/internal/event"
)

// typeText presses the keys of s, one rune at a time.
func typeText(m *model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

var (
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyAltEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	keyCtrlC    = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	keyCtrlD    = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	keyQ        = tea.KeyPressMsg{Code: 'q', Text: "q"}
)

// asking is an interactive model waiting for input, with the channel its
// reply arrives on.
func asking(w, h int) (*model, chan askReply) {
	m := sized(Options{Interactive: true}, w, h)
	reply := make(chan askReply, 1)
	m.Update(askMsg{reply: reply})
	return m, reply
}

func replied(t *testing.T, reply chan askReply) (askReply, bool) {
	t.Helper()
	select {
	case r := <-reply:
		return r, true
	default:
		return askReply{}, false
	}
}

// Enter sends the line; Alt-Enter adds a line; a """ block goes on over
// Enter until it is closed, and is sent without its delimiters.
func TestInputSendsLinesAndBlocks(t *testing.T) {
	m, reply := asking(80, 24)
	typeText(m, "first")
	m.Update(keyAltEnter)
	typeText(m, "second")
	if _, ok := replied(t, reply); ok {
		t.Fatal("Alt-Enter sent the input")
	}
	m.Update(keyEnter)
	if r, ok := replied(t, reply); !ok || r.text != "first\nsecond" || r.err != nil {
		t.Fatalf("Enter after Alt-Enter: %+v, %v; want the two lines", r, ok)
	}
	if m.input.Value() != "" {
		t.Errorf("the prompt keeps %q after sending", m.input.Value())
	}
	for _, delim := range []string{`"""`, `'''`} {
		m.Update(askMsg{reply: reply})
		typeText(m, delim)
		m.Update(keyEnter)
		typeText(m, "block a")
		m.Update(keyEnter)
		typeText(m, "block b")
		m.Update(keyEnter)
		if _, ok := replied(t, reply); ok {
			t.Fatalf("%s: Enter inside an open block sent it", delim)
		}
		typeText(m, delim)
		m.Update(keyEnter)
		if r, ok := replied(t, reply); !ok || r.text != "block a\nblock b" {
			t.Fatalf("%s block: %+v, %v; want its two lines without the delimiters", delim, r, ok)
		}
	}
	// An empty prompt sends nothing.
	m.Update(askMsg{reply: reply})
	typeText(m, "   ")
	m.Update(keyEnter)
	if r, ok := replied(t, reply); ok {
		t.Errorf("blank input was sent: %+v", r)
	}
	// A leading space is kept: it makes a question of a command word.
	m.input.Reset()
	typeText(m, " /help")
	m.Update(keyEnter)
	if r, _ := replied(t, reply); r.text != " /help" {
		t.Errorf("leading space: sent %q, want \" /help\"", r.text)
	}
}

// Ctrl+C drops what was typed; at an empty prompt Ctrl+C and Ctrl+D leave.
func TestInputQuitKeys(t *testing.T) {
	for _, k := range []tea.KeyPressMsg{keyCtrlC, keyCtrlD} {
		m, reply := asking(80, 24)
		typeText(m, "half a question")
		if _, cmd := m.Update(keyCtrlC); cmd != nil || m.input.Value() != "" {
			t.Fatalf("Ctrl+C on typed text: value %q, command %v; want the text dropped and no quit", m.input.Value(), cmd)
		}
		if _, ok := replied(t, reply); ok {
			t.Fatal("Ctrl+C on typed text answered Ask")
		}
		_, cmd := m.Update(k)
		r, ok := replied(t, reply)
		if !ok || !errors.Is(r.err, io.EOF) || cmd == nil {
			t.Errorf("%s at an empty prompt: reply %+v (%v), command %v; want EOF and quit", k, r, ok, cmd)
		} else if _, quit := cmd().(tea.QuitMsg); !quit {
			t.Errorf("%s at an empty prompt: the command is not quit", k)
		}
	}
}

// startTurn sends a question from the prompt and starts its run view.
func startTurn(t *testing.T, m *model, reply chan askReply, q string, cancel func()) *scripted {
	t.Helper()
	typeText(m, q)
	m.Update(keyEnter)
	if r, ok := replied(t, reply); !ok || r.text != q {
		t.Fatalf("the question was not sent: %+v", r)
	}
	m.Update(runMsg{Cancel: cancel})
	s := midRun(3)
	m.Update(s.batch())
	return s
}

// A turn in an interactive display: its run view replaces the prompt; q
// and Esc do nothing until the end (nothing is cancelled); after the end
// q goes back to the conversation, which has the question and the answer.
func TestInteractiveTurn(t *testing.T) {
	m, reply := asking(100, 30)
	var cancels atomic.Int32
	s := startTurn(t, m, reply, "What is the capital of France?", func() { cancels.Add(1) })
	if m.onInput() {
		t.Fatal("the prompt is on screen during the run")
	}
	for _, k := range []tea.KeyPressMsg{keyQ, {Code: tea.KeyEscape}} {
		if _, cmd := m.Update(k); cmd != nil || m.onInput() || cancels.Load() != 0 {
			t.Fatalf("%s mid-run: command %v, on input %v, cancels %d; want nothing", k, cmd, m.onInput(), cancels.Load())
		}
	}
	finished(s, 3)
	m.Update(s.batch())
	m.Update(endMsg{})
	// The prompt takes the keys as soon as the turn has finished (issue
	// 22): what the user types is the next question, not hotkeys.
	if !m.onInput() {
		t.Fatal("after the turn the prompt is not on screen")
	}
	m.Update(askMsg{reply: reply}) // the CLI asks for the next question at once
	for _, k := range []tea.KeyPressMsg{keyQ, {Code: 'r', Text: "r"}, {Code: 'v', Text: "v"}} {
		if _, cmd := m.Update(k); !m.onInput() {
			t.Fatalf("%s after the end: command %v, on input %v; want it typed", k, cmd, m.onInput())
		}
	}
	if v := m.input.Value(); v != "qrv" {
		t.Errorf("typed after the end: %q, want \"qrv\"", v)
	}
	m.input.Reset()
	got := renderAs(t, m, colorprofile.NoTTY)
	for _, want := range []string{"interactive · 1 turn", "you> What is the capital of France?", "massgen · by researcher (plurality) · 6.0s", "Paris"} {
		if !strings.Contains(got, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, got)
		}
	}
	if cancels.Load() != 0 {
		t.Errorf("a turn that ran to its end was cancelled %d times", cancels.Load())
	}
	// The next question starts the next run view.
	startTurn(t, m, reply, "And of Italy?", nil)
	if m.onInput() || m.finished {
		t.Error("the second turn's run view is not on screen, or it starts finished")
	}
}

// Ctrl+C mid-turn cancels that turn once and leaves neither the display
// nor the session: when the run has ended the prompt is back.
func TestCtrlCCancelsTheTurnOnly(t *testing.T) {
	m, reply := asking(80, 24)
	var cancels atomic.Int32
	s := startTurn(t, m, reply, "q1", func() { cancels.Add(1) })
	for range 2 {
		if _, cmd := m.Update(keyCtrlC); cmd != nil {
			t.Fatal("Ctrl+C mid-turn quits the display")
		}
	}
	if cancels.Load() != 1 {
		t.Errorf("Ctrl+C twice mid-turn: %d cancels, want 1", cancels.Load())
	}
	s.at(4300*time.Millisecond, event.RunFinished{Status: "interrupted", Err: "interrupted"})
	m.Update(s.batch())
	m.Update(endMsg{})
	if !m.onInput() {
		t.Fatal("after a cancelled turn the prompt is not back")
	}
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "without a final answer (interrupted)") {
		t.Errorf("the conversation does not say the turn was interrupted:\n%s", got)
	}
}

// Notes (what commands print), earlier turns and /clear.
func TestConversationNotesAndClear(t *testing.T) {
	m, _ := asking(80, 24)
	m.Update(pastMsg{question: "earlier question", answer: "earlier **answer**"})
	m.Update(noteMsg("session: abc\nturns: 1\n"))
	got := renderAs(t, m, colorprofile.NoTTY)
	for _, want := range []string{"interactive · 1 turn", "you> earlier question", "massgen · earlier turn", "earlier answer", "session: abc", "turns: 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, got)
		}
	}
	m.Update(clearMsg{})
	if got := renderAs(t, m, colorprofile.NoTTY); strings.Contains(got, "earlier question") || !strings.Contains(got, "No questions yet") || !strings.Contains(got, "0 turns") {
		t.Errorf("/clear left the conversation on screen:\n%s", got)
	}
}

// PgUp scrolls the conversation back; PgDn returns to its end.
func TestConversationScrolls(t *testing.T) {
	m, _ := asking(80, 24)
	for i := range 40 {
		m.Update(noteMsg(fmt.Sprintf("line %02d", i)))
	}
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "line 39") || strings.Contains(got, "line 00") {
		t.Fatalf("the conversation does not show its end:\n%s", got)
	}
	for range 5 { // more than enough: the offset stops at the start
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "line 00") {
		t.Errorf("PgUp did not reach the start:\n%s", got)
	}
	for range 4 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "line 39") {
		t.Errorf("PgDn did not come back to the end:\n%s", got)
	}
}

// Through the program: the prompt gets what was typed, a note shows,
// Ctrl+D at the empty prompt answers ErrClosed and Wait returns.
func TestAskThroughTheProgram(t *testing.T) {
	u := New(Options{Output: io.Discard, Interactive: true, Width: 80, Height: 24,
		ProgramOptions: []tea.ProgramOption{tea.WithInput(nil)}})
	u.Note("hello")
	reply := u.ask() // as Ask does, but the keys below are sure to come after it
	u.prog.Send(tea.KeyPressMsg{Code: 'h', Text: "h"})
	u.prog.Send(tea.KeyPressMsg{Code: 'i', Text: "i"})
	u.prog.Send(keyEnter)
	if r := <-reply; r.text != "hi" || r.err != nil {
		t.Fatalf("Ask: %+v, want hi", r)
	}
	reply = u.ask()
	u.prog.Send(keyCtrlD)
	if r := <-reply; !errors.Is(r.err, ErrClosed) {
		t.Errorf("Ctrl+D: Ask returned %+v, want ErrClosed", r)
	}
	if _, err := u.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := len(u.final.conv); n != 2 {
		t.Errorf("the conversation has %d entries, want the note and the question", n)
	}
}

// Ask gives up when its context ends; Close then leaves the display.
func TestAskContextAndClose(t *testing.T) {
	u := New(Options{Output: io.Discard, Interactive: true, ProgramOptions: []tea.ProgramOption{tea.WithInput(nil)}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := u.Ask(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ask with an ended context: %v", err)
	}
	u.Close()
	if _, err := u.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Golden frames of the input page: empty, and the conversation after a
// turn with a note from a command and a two-line question being typed.
func TestGoldenInteractive(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run(name, func(t *testing.T) {
			m, reply := asking(size.w, size.h)
			if got := checkFrame(t, "input_"+name, m, colorprofile.NoTTY); !strings.Contains(got, "No questions yet") ||
				!strings.Contains(got, "> Ask the team a question") {
				t.Error("the empty input page lacks its hint or its prompt")
			}
			s := startTurn(t, m, reply, "What is the capital of France?", nil)
			finished(s, 3)
			m.Update(s.batch())
			m.Update(endMsg{}) // the prompt is back at once: no q needed
			m.Update(noteMsg("saved 1 turn to /tmp/session.md"))
			m.Update(askMsg{reply: reply})
			typeText(m, "And of Italy?")
			m.Update(keyAltEnter)
			typeText(m, "One line, please.")
			got := checkFrame(t, "conversation_"+name, m, colorprofile.NoTTY)
			for _, want := range []string{"1 turn", "you> What is the capital of France?", "massgen · by researcher", "Paris",
				"saved 1 turn", "> And of Italy?", "> One line, please."} {
				if !strings.Contains(got, want) {
					t.Errorf("the conversation frame lacks %q", want)
				}
			}
			checkFrame(t, "conversation_"+name+"_color", m, colorprofile.ANSI256)
		})
	}
}

// A question typed and sent before the prompt opens (the last turn is
// still being recorded) is sent when it opens.
func TestTypeAhead(t *testing.T) {
	m := sized(Options{Interactive: true}, 80, 24)
	typeText(m, "early question")
	m.Update(keyEnter)
	reply := make(chan askReply, 1)
	m.Update(askMsg{reply: reply})
	if r, ok := replied(t, reply); !ok || r.text != "early question" {
		t.Errorf("type-ahead: %+v, %v; want the question sent when the prompt opened", r, ok)
	}
	m.Update(askMsg{reply: reply})
	if r, ok := replied(t, reply); ok {
		t.Errorf("the next prompt sent %+v by itself", r)
	}
}
