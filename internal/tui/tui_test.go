package tui

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/event"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir) // the tmux tests' binary
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newTestUI is a UI without a terminal: no input, output discarded.
func newTestUI(cancel func()) *UI {
	return New(Options{Output: io.Discard, Cancel: cancel, Width: 80, Height: 24,
		ProgramOptions: []tea.ProgramOption{tea.WithInput(nil)}})
}

func publishAll(b *event.Broker, s *scripted) {
	for _, e := range s.events {
		b.Publish(e)
	}
	s.events = nil
}

// Follow returns when the run's events end, the display stays until q,
// and q after the end does not cancel anything.
func TestFollowThenQuitAtTheEnd(t *testing.T) {
	var cancels atomic.Int32
	u := newTestUI(func() { cancels.Add(1) })
	b := event.NewBroker()
	sub := b.Subscribe(event.Bookkeeping...)
	u.start() // so that the test may send keys at once
	followed := make(chan struct{})
	go func() { u.Follow(sub, Run{}); close(followed) }()
	s := midRun(3)
	finished(s, 3)
	publishAll(b, s)
	b.Close()
	<-followed
	u.prog.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	res, err := u.Wait()
	if err != nil || res.QuitEarly || cancels.Load() != 0 {
		t.Fatalf("Wait: %+v, %v; cancels %d: want a clean exit without cancelling", res, err, cancels.Load())
	}
	if m := u.final; !m.finished || !m.ended || m.snap.Status != "completed" || len(m.timeline) == 0 {
		t.Errorf("the display did not see the whole run: finished %v, ended %v, status %q, %d timeline entries",
			m.finished, m.ended, m.snap.Status, len(m.timeline))
	}
}

// q before the end cancels the run and leaves at once; Follow still reads
// the run to its end, as the run's observer must.
func TestQuitMidRunCancelsAndStillDrains(t *testing.T) {
	var cancels atomic.Int32
	u := newTestUI(func() { cancels.Add(1) })
	b := event.NewBroker()
	sub := b.Subscribe(event.Bookkeeping...)
	u.start() // so that the test may send keys at once
	followed := make(chan struct{})
	go func() { u.Follow(sub, Run{}); close(followed) }()
	s := midRun(3)
	publishAll(b, s)
	u.prog.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	res, err := u.Wait()
	if err != nil || !res.QuitEarly || cancels.Load() != 1 {
		t.Fatalf("Wait: %+v, %v; cancels %d: want an early quit that cancels once", res, err, cancels.Load())
	}
	finished(s, 3) // the run goes on to its end after the user left
	publishAll(b, s)
	b.Close()
	<-followed
	if d := sub.Dropped(); d != 0 {
		t.Errorf("%d events dropped although Follow kept reading", d)
	}
}

// A UI that never followed a run never touched the terminal.
func TestWaitWithoutARun(t *testing.T) {
	if res, err := New(Options{}).Wait(); err != nil || res.QuitEarly {
		t.Errorf("Wait: %+v, %v", res, err)
	}
}
