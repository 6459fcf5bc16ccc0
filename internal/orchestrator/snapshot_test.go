package orchestrator

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// The workspace hooks: Snapshot runs once per accepted answer, with its
// stable label, and its result rides on the AnswerAccepted event; every
// turn and the presentation get BeforeTurn with the answers they show, a
// turn that shows an answer only after that answer's snapshot was taken.
func TestSnapshotAndBeforeTurnHooks(t *testing.T) {
	_, agents := simTeam(t, `
models:
  sim-a: {steps: [{answer: "A one."}, {vote: agent1}]}
  sim-b: {steps: [{answer: "B one."}, {vote: agent1}]}
`, "a", "b")
	var mu sync.Mutex
	var log []string
	snapped := map[string]bool{}
	for i := range agents {
		id := agents[i].ID
		agents[i].BeforeTurn = func(shown []coord.Answer) {
			mu.Lock()
			defer mu.Unlock()
			var labels []string
			for _, a := range shown {
				if !snapped[a.Agent] {
					t.Errorf("%s's turn shows %s's answer before its snapshot", id, a.Agent)
				}
				labels = append(labels, a.Label+"="+a.Agent)
			}
			log = append(log, "turn "+id+" ["+strings.Join(labels, " ")+"]")
		}
	}
	carried := map[string]string{}
	broker, done := onAccepted(func(a event.AnswerAccepted) { carried[a.Agent] = a.Workspace })
	res := Run(context.Background(), "q", Options{Agents: agents, Events: broker,
		Snapshot: func(agent, label string) string {
			mu.Lock()
			defer mu.Unlock()
			snapped[agent] = true
			log = append(log, "snapshot "+agent+" "+label)
			return "/snapshots/" + label
		}})
	broker.Close()
	<-done
	if res.Status != Completed || res.Winner != "a" {
		t.Fatalf("status %s winner %q err %v", res.Status, res.Winner, res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(log, "\n")
	for _, want := range []string{"snapshot a agent1.1", "snapshot b agent2.1", "turn a [agent1=a agent2=b]", "turn b [agent1=a agent2=b]"} {
		if strings.Count(got, want) < 1 {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "snapshot "); n != 2 {
		t.Errorf("%d snapshots, want one per answer:\n%s", n, got)
	}
	// Two first turns, two voting turns, the presentation.
	if n := strings.Count(got, "turn "); n != 5 {
		t.Errorf("%d BeforeTurn calls, want 5:\n%s", n, got)
	}
	if carried["a"] != "/snapshots/agent1.1" || carried["b"] != "/snapshots/agent2.1" {
		t.Errorf("AnswerAccepted.Workspace: %v", carried)
	}
}

// A slow view layout (BeforeTurn) holds up only its own turn: here b's
// first layout waits until a's answer has been accepted, which needs the
// loop (a layout on the loop would wait for ever).
func TestSlowBeforeTurnDoesNotHoldTheLoop(t *testing.T) {
	_, agents := simTeam(t, `
models:
  sim-a: {steps: [{answer: "A one."}, {vote: agent1}]}
  sim-b: {steps: [{answer: "B one."}, {vote: agent1}]}
`, "a", "b")
	accepted := make(chan struct{})
	var once sync.Once
	var first sync.Once
	agents[1].BeforeTurn = func([]coord.Answer) {
		first.Do(func() {
			select {
			case <-accepted:
			case <-time.After(time.Minute):
				t.Error("a's answer was not accepted while b's layout waited: the layout holds the loop")
			}
		})
	}
	broker, done := onAccepted(func(a event.AnswerAccepted) {
		if a.Agent == "a" {
			once.Do(func() { close(accepted) })
		}
	})
	res := Run(context.Background(), "q", Options{Agents: agents, Events: broker})
	broker.Close()
	<-done
	if res.Status != Completed {
		t.Fatalf("status %s err %v", res.Status, res.Err)
	}
}

// Only the newest turn of an agent lays out its view: a superseded turn's
// layout that comes late does nothing, and a layout that is under way
// when a newer turn asks for its own finishes first.
func TestSupersededTurnsLayoutDoesNothing(t *testing.T) {
	r := &runner{views: map[string]*viewGate{}}
	var mu sync.Mutex
	var calls []string
	var busy atomic.Bool
	started, release := make(chan struct{}), make(chan struct{})
	a := &Agent{ID: "a", BeforeTurn: func(shown []coord.Answer) {
		if busy.Swap(true) {
			t.Error("two layouts of one agent at once")
		}
		if shown[0].Label == "first" {
			close(started)
			<-release
		}
		mu.Lock()
		calls = append(calls, shown[0].Label)
		mu.Unlock()
		busy.Store(false)
	}}
	// The first turn's layout is under way when the second turn starts.
	first := r.beforeTurn(a)
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		first([]coord.Answer{{Label: "first"}})
	}()
	<-started
	old, newer := r.beforeTurn(a), r.beforeTurn(a)
	newerDone := make(chan struct{})
	go func() {
		defer close(newerDone)
		newer([]coord.Answer{{Label: "new"}})
	}()
	// The newer layout has time to start beside the first: the gate must
	// keep it waiting (without the gate, "two layouts at once" fails).
	time.Sleep(100 * time.Millisecond)
	close(release)
	<-firstDone
	<-newerDone
	old([]coord.Answer{{Label: "old"}}) // superseded, and late
	if got := strings.Join(calls, ","); got != "first,new" {
		t.Errorf("layouts %s, want first,new", got)
	}
}

// onAccepted calls fn with each AnswerAccepted event of a run on the
// broker it returns; done closes once the broker is closed and drained.
func onAccepted(fn func(event.AnswerAccepted)) (broker *event.Broker, done <-chan struct{}) {
	broker = event.NewBroker()
	sub := broker.Subscribe(event.Deltas...)
	d := make(chan struct{})
	go func() {
		defer close(d)
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if a, ok := e.(event.AnswerAccepted); ok {
				fn(a)
			}
		}
	}()
	return broker, d
}
