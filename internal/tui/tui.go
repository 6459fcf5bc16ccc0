package tui

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/massgen/massgen/internal/event"
)

// frame is the pump's tick: events read in between are coalesced into one
// message, so the display redraws at most 20 times a second however fast
// the agents stream. idleFrames ticks without events still send one (the
// clock and stall marks move).
const (
	frame      = 50 * time.Millisecond
	idleFrames = 5
)

// Options configure a UI.
type Options struct {
	Input  io.Reader // the terminal's input (keys)
	Output io.Writer // the terminal's output
	// Context stops the display when done (a SIGTERM to massgen); nil:
	// only the keys stop it.
	Context context.Context
	// Cancel cancels the run; it is called when the user quits before the
	// run has finished.
	Cancel func()
	Now    func() time.Time // the clock; nil is time.Now
	// ExitAtEnd leaves the display as soon as the run's events end, for
	// when nobody can press q (the input is not a terminal).
	ExitAtEnd bool
	// Interactive makes the display a session's: an input page with the
	// conversation between runs (Ask), q leaves a finished run's view for
	// it, and Ctrl+C cancels the current run (Run.Cancel), not the display.
	Interactive bool
	// Width and Height, when set, are the size to assume until the
	// terminal reports one (tests, benchmarks); the terminal's size wins.
	Width, Height int
	// ProgramOptions are passed to Bubble Tea as they are (tests set a
	// colour profile or turn the renderer off).
	ProgramOptions []tea.ProgramOption
}

// UI is the live display of one run. Follow shows a run's events; Wait
// blocks until the user leaves. The program starts with the first Follow,
// so a run that fails before it starts never touches the terminal.
//
// One UI is meant to outlive a run: an interactive session
// (Options.Interactive) calls Ask for each question, Follow once per turn
// (the model resets its per-run state on RunStarted), Note for what its
// commands print, and Close then Wait when the session ends.
type UI struct {
	opts    Options
	mu      sync.Mutex
	prog    *tea.Program
	done    chan struct{}
	final   *model
	err     error
	started bool
}

// New returns a display that has not started.
func New(opts Options) *UI {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &UI{opts: opts, done: make(chan struct{})}
}

// start runs the Bubble Tea program once.
func (u *UI) start() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.started {
		return
	}
	u.started = true
	m := newModel(u.opts)
	if u.opts.Width > 0 && u.opts.Height > 0 {
		m.width, m.height = u.opts.Width, u.opts.Height
	}
	opts := []tea.ProgramOption{tea.WithInput(u.opts.Input), tea.WithOutput(u.opts.Output),
		// massgen's own handler turns SIGINT/SIGTERM into a cancelled run
		// (cli.Main); in raw mode Ctrl+C is a key, handled in Update.
		tea.WithoutSignalHandler()}
	if u.opts.Context != nil {
		opts = append(opts, tea.WithContext(u.opts.Context))
	}
	u.prog = tea.NewProgram(m, append(opts, u.opts.ProgramOptions...)...)
	go func() {
		defer close(u.done)
		_, err := u.prog.Run()
		if errors.Is(err, tea.ErrProgramKilled) {
			err = nil // the context ended it: the run is cancelled as well
		}
		u.final, u.err = m, err
	}()
}

// Run is what the display learns about a run as it starts.
type Run struct {
	Timeout time.Duration // the run's deadline after its start (0: none)
	// Cancel cancels this run alone (an interactive session's turn); nil:
	// Options.Cancel.
	Cancel func()
}

// Follow shows the run behind sub until its events end, and returns then
// (the user may still be reading: Wait waits for them). It consumes sub to
// its end even after the user has left, as a run's observer must.
func (u *UI) Follow(sub *event.Subscription, run Run) {
	u.start()
	u.prog.Send(runMsg(run))
	view := sub.View()
	events := make(chan event.Event, 256)
	go func() {
		defer close(events)
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			events <- e
		}
	}()
	tick := time.NewTicker(frame)
	defer tick.Stop()
	var batch []event.Event
	idle := 0
	send := func() {
		now := u.opts.Now()
		u.prog.Send(batchMsg{events: batch, snap: view.Snapshot(now), now: now})
		batch, idle = nil, 0
	}
	for {
		select {
		case e, ok := <-events:
			if !ok {
				send()
				u.prog.Send(endMsg{})
				return
			}
			batch = append(batch, e)
		case <-tick.C:
			if idle++; len(batch) > 0 || idle >= idleFrames {
				send()
			}
		}
	}
}

// Result is how the user left the display.
type Result struct {
	// QuitEarly is true when the user left before the run finished (the
	// run was cancelled).
	QuitEarly bool
}

// Wait blocks until the user leaves the display (or its context ends) and
// the terminal is restored. A UI that never started returns at once.
func (u *UI) Wait() (Result, error) {
	u.mu.Lock()
	started := u.started
	u.mu.Unlock()
	if !started {
		return Result{}, nil
	}
	<-u.done
	return Result{QuitEarly: u.final.quitEarly}, u.err
}

// ErrClosed is Ask's error when the user leaves the session (Ctrl+D, or
// Ctrl+C at an empty prompt) or the display has stopped.
var ErrClosed = io.EOF

// Ask shows the input page (an interactive display's, Options.Interactive)
// and returns what the user sends: a line, or several (Alt-Enter, a
// """ block). A finished run's view stays until the user leaves it with q.
// It returns ErrClosed when the user quits, ctx's error when ctx ends.
func (u *UI) Ask(ctx context.Context) (string, error) {
	reply := u.ask()
	select {
	case r := <-reply:
		return r.text, r.err
	case <-u.done:
		return "", ErrClosed
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ask opens the prompt and returns where the answer will arrive; the
// prompt is open when it returns (keys sent after it reach it).
func (u *UI) ask() <-chan askReply {
	u.start()
	reply := make(chan askReply, 1)
	u.prog.Send(askMsg{reply: reply})
	return reply
}

// Note adds text to the conversation: what a command printed, an error.
func (u *UI) Note(text string) { u.send(noteMsg(text)) }

// Past adds an earlier turn to the conversation (a resumed session).
func (u *UI) Past(question, answer string) { u.send(pastMsg{question: question, answer: answer}) }

// Clear empties the conversation on screen (/clear).
func (u *UI) Clear() { u.send(clearMsg{}) }

func (u *UI) send(msg tea.Msg) {
	u.start()
	u.prog.Send(msg)
}

// Close leaves the display (the session is over); Wait then returns.
func (u *UI) Close() {
	u.mu.Lock()
	started := u.started
	u.mu.Unlock()
	if started {
		u.prog.Quit()
	}
}
