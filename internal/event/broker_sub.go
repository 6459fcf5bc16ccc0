package event

import "sync"

// Subscription is one reader's queue: first the replay it asked for
// (SubscribeOptions.From), then what the broker publishes.
type Subscription struct {
	// Set once, before the subscription is shared.
	skip                      []Type
	view                      *View
	from                      uint64
	neverCut                  bool
	broker                    *Broker
	mustBacklog, deltaBacklog int

	mu      sync.Mutex
	replay  []Event
	queue   []Event
	must    int // must-deliver events in queue
	dropped uint64
	done    bool
	err     error         // why it was cut, if it was
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

// push queues e, or drops it (a droppable event beyond the backlog), or
// cuts the subscription (a must-deliver event beyond its backlog). It
// reports false once the subscription has ended, for the broker to forget
// it. The broker calls it under its lock, in sequence order.
func (s *Subscription) push(e Event) bool {
	s.mu.Lock()
	switch {
	case s.done:
		s.mu.Unlock()
		return false
	case e.Head().Seq < s.from: // a From ahead of the broker: not yet
		s.mu.Unlock()
		return true
	case e.Type().Droppable():
		if len(s.queue) >= s.deltaBacklog {
			s.dropped++
			s.mu.Unlock()
			return true
		}
	case !s.neverCut && s.must >= s.mustBacklog:
		next := e.Head().Seq
		if len(s.replay) > 0 {
			next = s.replay[0].Head().Seq
		} else if len(s.queue) > 0 {
			next = s.queue[0].Head().Seq
		}
		s.err = &LagError{Queued: s.must + 1, Next: next, Latest: e.Head().Seq}
		// Cut at once: what it had queued is released now, and the reader
		// resumes from Next (the history has it) rather than reading on.
		s.replay, s.queue, s.must, s.done = nil, nil, 0, true
		s.mu.Unlock()
		s.signal()
		return false
	default:
		s.must++
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.signal()
	return true
}

func (s *Subscription) close() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next blocks until an event is available and returns it; ok is false once
// the broker is closed and the queue is drained, when the subscription was
// cut or closed (Err says whether it was cut), or when cancel fires.
func (s *Subscription) Next(cancel <-chan struct{}) (e Event, ok bool) {
	for {
		s.mu.Lock()
		if len(s.replay) > 0 {
			e = s.replay[0]
			s.replay[0] = nil
			s.replay = s.replay[1:]
			s.mu.Unlock()
			return e, true
		}
		if len(s.queue) > 0 {
			e = s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if !e.Type().Droppable() {
				s.must--
			}
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

// Err is why the subscription ended early: a *LagError when it was cut
// for lagging, a *HistoryError when the history it asked for is forgotten
// (both match ErrCut), nil otherwise (it is running, the broker closed, or
// it was closed).
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close leaves the broker at once (a client that went away): the events
// queued are discarded and Next returns ok=false. Closing twice is
// harmless.
func (s *Subscription) Close() {
	if s.broker != nil {
		s.broker.leave(s)
	}
	s.mu.Lock()
	s.replay, s.queue, s.must, s.done = nil, nil, 0, true
	s.mu.Unlock()
	s.signal()
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
