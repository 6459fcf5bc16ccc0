package event

import (
	"sync"
	"time"
)

// deltaBacklog is how many queued events a subscriber may fall behind by
// before new deltas addressed to it are dropped. Important events queue
// without limit: they are few, and losing one would corrupt the logs.
const deltaBacklog = 1024

// Broker numbers events and fans them out. Publish never blocks on a
// subscriber, so a stuck display cannot stall coordination.
//
// Every broker keeps the run's View up to date as it publishes, under the
// same lock, so the view is never behind what any subscriber has seen and
// loses no event (deltas included: they are the agents' activity).
type Broker struct {
	mu     sync.Mutex
	seq    uint64
	subs   []*Subscription
	closed bool
	now    func() time.Time
	view   *View
}

// NewBroker returns an empty broker with an empty view.
func NewBroker() *Broker { return &Broker{now: time.Now, view: NewView()} }

// View is the run view this broker keeps.
func (b *Broker) View() *View { return b.view }

// Publish stamps e with the next sequence number, the time (unless set)
// and the attempt (unless set: events before the first attempt belong to
// it, and attempts count from 1 everywhere), applies it to the view and
// delivers it. It returns the stamped event.
func (b *Broker) Publish(e Event) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	h := e.Head()
	h.Seq = b.seq
	if h.Time.IsZero() {
		h.Time = b.now()
	}
	h.Attempt = max(h.Attempt, 1)
	e = e.withHead(h)
	b.view.Apply(e)
	if b.closed {
		return e
	}
	for _, s := range b.subs {
		if !s.skips(e.Type()) {
			s.push(e)
		}
	}
	return e
}

// Subscribe returns a subscription that sees every event published from
// now on, except those of the types in skip. A reader that does not show
// streamed text should skip Deltas: each delivered event wakes it up, and
// a run sends a delta per token.
func (b *Broker) Subscribe(skip ...Type) *Subscription {
	s := &Subscription{ready: make(chan struct{}, 1), skip: skip, view: b.view}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.close()
	} else {
		b.subs = append(b.subs, s)
	}
	return s
}

// Close ends every subscription once it has drained what it was sent.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for _, s := range b.subs {
		s.close()
	}
}

// Subscription is one reader's queue.
type Subscription struct {
	skip    []Type // set once, before the subscription is shared
	view    *View
	mu      sync.Mutex
	queue   []Event
	dropped uint64
	done    bool
	ready   chan struct{} // one token: "queue changed"
}

func (s *Subscription) skips(t Type) bool {
	for _, x := range s.skip {
		if x == t {
			return true
		}
	}
	return false
}

func (s *Subscription) push(e Event) {
	s.mu.Lock()
	if e.Type().Droppable() && len(s.queue) >= deltaBacklog {
		s.dropped++
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) close() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next blocks until an event is available and returns it; ok is false once
// the broker is closed and the queue is drained, or when cancel fires.
func (s *Subscription) Next(cancel <-chan struct{}) (e Event, ok bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			e = s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return e, true
		}
		done := s.done
		s.mu.Unlock()
		if done {
			return nil, false
		}
		select {
		case <-s.ready:
		case <-cancel:
			return nil, false
		}
	}
}

// View is the view of the run this subscription follows (its broker's),
// for readers that want the state rather than the steps.
func (s *Subscription) View() *View { return s.view }

// Dropped is how many droppable events this subscription lost.
func (s *Subscription) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}
