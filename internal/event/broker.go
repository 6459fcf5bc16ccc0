package event

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// The broker's bounds. Whatever a run's length, what the broker holds is
// bounded by them: history (historyLimit must-deliver events) plus recent
// droppable events (recentLimit) plus, per subscriber that may be cut, a
// queue of at most mustBacklog must-deliver and deltaBacklog droppable
// events (a replay it asked for aside, which is a copy of the history).
// Only subscribers made with NeverCut queue without bound: they are the
// run's own writers, in-process, and losing an event there would corrupt
// the logs.
const (
	// deltaBacklog is how many queued events a subscriber may fall behind
	// by before droppable events addressed to it are dropped (counted by
	// Dropped).
	deltaBacklog = 1024
	// mustBacklog is how many must-deliver events a subscriber may have
	// queued and unread; the next one cuts it (LagError).
	mustBacklog = 4096
	// historyLimit is how many must-deliver events the broker keeps for
	// subscribers that start from a sequence number. Past it the oldest
	// half is forgotten; a run rarely has more than a few hundred.
	historyLimit = 1 << 16
	// recentLimit is how many of the latest droppable events the broker
	// keeps for them.
	recentLimit = 1024
)

// Broker numbers events, makes the must-deliver ones durable, and fans
// them out to any number of subscribers. Publish never blocks on a
// subscriber, so a stuck display (or a stuck network client) cannot stall
// coordination; what a slow subscriber costs is bounded (see the bounds
// above).
//
// Delivery rules: droppable events (Deltas and Ticks) may be lost by a
// subscriber that lags (counted by Dropped). Every other event is
// delivered, in sequence order, to every subscriber; a subscriber that
// falls mustBacklog such events behind is cut instead: its Next ends and
// its Err says how far behind it was and where to resume
// (SubscribeOptions.From).
//
// Persist, then deliver: the broker's sinks (Persist) receive each
// must-deliver event synchronously in Publish, in sequence order, before
// the view or any subscriber sees it, so nothing is shown, streamed or
// acted on before it is stored.
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

	sinks       []func(Event) error
	sinkErr     error // the first error a sink returned
	sinkErrMore int   // and how many followed it

	// history holds the must-deliver events since the last one forgotten
	// (Seq forgot); recent is a ring of the latest droppable events,
	// oldest at recentAt once it is full.
	history  []Event
	forgot   uint64
	recent   []Event
	recentAt int

	// The bounds, fields so that tests can make them small.
	historyLimit, recentLimit, mustBacklog, deltaBacklog int
}

// NewBroker returns an empty broker with an empty view.
func NewBroker() *Broker {
	return &Broker{now: time.Now, view: NewView(),
		historyLimit: historyLimit, recentLimit: recentLimit, mustBacklog: mustBacklog, deltaBacklog: deltaBacklog}
}

// View is the run view this broker keeps.
func (b *Broker) View() *View { return b.view }

// Persist adds a durable sink: from now on Publish calls sink with each
// must-deliver event (stamped), in sequence order and one call at a time,
// before the view or any subscriber sees the event. A sink must have made
// the event durable when it returns (a write(2) to a file, a committed
// database transaction) and should be quick: Publish holds its lock
// meanwhile (so a sink must not publish, or subscribe). Droppable events never reach a sink (they stay with the
// subscribers: a delta per token is not worth a write each). A sink's
// error does not hold the event back — a run that cannot store an event
// still shows it — but PersistErr reports it. Add sinks before the first
// Publish; events published after Close reach no sink.
func (b *Broker) Persist(sink func(Event) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sinks = append(b.sinks, sink)
}

// PersistErr is the first error a sink returned (with a count of those
// that followed), or nil.
func (b *Broker) PersistErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sinkErr != nil && b.sinkErrMore > 0 {
		return fmt.Errorf("%w (and %d more errors storing events)", b.sinkErr, b.sinkErrMore)
	}
	return b.sinkErr
}

// Publish stamps e with the next sequence number, the time (unless set)
// and the attempt (unless set: events before the first attempt belong to
// it, and attempts count from 1 everywhere), hands a must-deliver event to
// the sinks, applies it to the view and delivers it. It returns the
// stamped event.
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
	droppable := e.Type().Droppable()
	if !droppable && !b.closed {
		for _, sink := range b.sinks {
			if err := sink(e); err != nil {
				if b.sinkErr == nil {
					b.sinkErr = err
				} else {
					b.sinkErrMore++
				}
			}
		}
	}
	b.view.Apply(e)
	if droppable {
		b.keepRecent(e)
	} else {
		b.keepHistory(e)
	}
	if b.closed {
		return e
	}
	cut := false
	for _, s := range b.subs {
		if !s.skips(e.Type()) && !s.push(e) {
			cut = true
		}
	}
	if cut {
		b.subs = slices.DeleteFunc(b.subs, (*Subscription).ended)
	}
	return e
}

func (b *Broker) keepHistory(e Event) {
	if len(b.history) >= b.historyLimit {
		// Forget the oldest half at once, into a new array so that the
		// forgotten events can be collected: amortised O(1) per event.
		n := len(b.history) / 2
		b.forgot = b.history[n-1].Head().Seq
		b.history = slices.Clone(b.history[n:])
	}
	b.history = append(b.history, e)
}

func (b *Broker) keepRecent(e Event) {
	if len(b.recent) < b.recentLimit {
		b.recent = append(b.recent, e)
		return
	}
	b.recent[b.recentAt] = e
	b.recentAt = (b.recentAt + 1) % len(b.recent)
}

// since is what the broker keeps from sequence number from on, in order:
// every must-deliver event, and the droppable ones still in the ring.
func (b *Broker) since(from uint64, skips func(Type) bool) []Event {
	i := sort.Search(len(b.history), func(i int) bool { return b.history[i].Head().Seq >= from })
	must := b.history[i:]
	drops := append(b.recent[b.recentAt:len(b.recent):len(b.recent)], b.recent[:b.recentAt]...)
	j := sort.Search(len(drops), func(i int) bool { return drops[i].Head().Seq >= from })
	drops = drops[j:]
	out := make([]Event, 0, len(must)+len(drops))
	for len(must) > 0 || len(drops) > 0 {
		var e Event
		if len(drops) == 0 || len(must) > 0 && must[0].Head().Seq < drops[0].Head().Seq {
			e, must = must[0], must[1:]
		} else {
			e, drops = drops[0], drops[1:]
		}
		if !skips(e.Type()) {
			out = append(out, e)
		}
	}
	return out
}

// SubscribeOptions say what a subscription receives and whether it may be
// cut.
type SubscribeOptions struct {
	// Skip are the event types it leaves out. A reader that does not show
	// streamed text should skip Deltas: each delivered event wakes it up,
	// and a run sends a delta per token.
	Skip []Type
	// From, when not 0, is the first sequence number wanted: the events
	// already published from it on are replayed first, then the live
	// stream follows, with no gap and no repeat among must-deliver events
	// (a client that joins late or reconnects after a cut). Droppable
	// events are replayed only while the broker still keeps them (the
	// latest recentLimit); a gap in sequence numbers tells the reader that
	// deltas were lost there. If the broker has forgotten a must-deliver
	// event from From on (past historyLimit of them), the subscription
	// ends at once and its Err is a *HistoryError.
	From uint64
	// NeverCut is for the in-process writers the run depends on (the log
	// writer, a recorder) and for the run's own observer (app's Observe: a
	// display, --stream-events, the library's OnEvent, whose contract is
	// that only streamed text may be lost): such a subscription queues
	// without bound rather than being cut when it lags — bounded by the
	// run's must-deliver events, since droppable ones still drop. Clients
	// that subscribe for themselves over the network (/v1/runs/{id}/events)
	// must not set it: their lag, over many runs, would be the process's
	// memory.
	NeverCut bool
}

// Subscribe returns a subscription that sees every event published from
// now on, except those of the types in skip. It may be cut if it lags
// (SubscribeWith says more).
func (b *Broker) Subscribe(skip ...Type) *Subscription {
	return b.SubscribeWith(SubscribeOptions{Skip: skip})
}

// SubscribeWith returns a subscription as o describes. Subscribing after
// Close still replays the history asked for with From, then ends.
func (b *Broker) SubscribeWith(o SubscribeOptions) *Subscription {
	s := &Subscription{ready: make(chan struct{}, 1), skip: o.Skip, view: b.view, from: o.From, neverCut: o.NeverCut, broker: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	s.mustBacklog, s.deltaBacklog = b.mustBacklog, b.deltaBacklog
	if o.From > 0 {
		if o.From <= b.forgot {
			s.err = &HistoryError{From: o.From, Kept: b.forgot + 1}
			s.done = true
			return s
		}
		s.replay = b.since(o.From, s.skips)
	}
	if b.closed {
		s.done = true
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

// leave forgets s (Subscription.Close).
func (b *Broker) leave(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.subs, s); i >= 0 {
		b.subs = slices.Delete(b.subs, i, i+1)
	}
}

// LagError is why a subscription was cut: it had Queued must-deliver
// events unread when the broker published Latest. SubscribeWith with
// From: Next resumes it with nothing lost.
type LagError struct {
	Queued int    // must-deliver events published to it and not read
	Next   uint64 // the first sequence number it had not read
	Latest uint64 // the sequence number that cut it
}

func (e *LagError) Error() string {
	return fmt.Sprintf("event: subscriber cut for lagging: %d events unread, %d behind (resume from seq %d)",
		e.Queued, e.Latest-e.Next+1, e.Next)
}

// HistoryError is why a subscription from a sequence number ended at
// once: the broker no longer keeps every must-deliver event from From on,
// only those from Kept.
type HistoryError struct {
	From, Kept uint64
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("event: history from seq %d is forgotten; it is kept from seq %d", e.From, e.Kept)
}

// ErrCut matches any error that ended a subscription early (errors.Is):
// a *LagError or a *HistoryError.
var ErrCut = errors.New("event: subscription cut")

func (e *LagError) Is(target error) bool     { return target == ErrCut }
func (e *HistoryError) Is(target error) bool { return target == ErrCut }
