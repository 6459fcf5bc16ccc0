package event

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seqs are the sequence numbers of events.
func seqs(es []Event) []uint64 {
	out := []uint64{}
	for _, e := range es {
		out = append(out, e.Head().Seq)
	}
	return out
}

// seqRange is from, from+1, …, to.
func seqRange(from, to uint64) []uint64 {
	out := []uint64{}
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// answer is a must-deliver event.
func answer(i int) Event {
	return mk(Record{Type: TypeAnswerAccepted, Agent: "a", Text: strconv.Itoa(i)})
}

// delta is a droppable one.
func delta(i int) Event { return mk(Record{Type: TypeTextDelta, Agent: "a", Text: strconv.Itoa(i)}) }

// A subscriber that falls a bound of must-deliver events behind is cut at
// once, with a notice saying how far behind it was and where to resume;
// the others, a never-cut one that does not read either, lose nothing,
// and resuming from the notice's sequence number loses nothing either.
func TestLaggingSubscriberIsCutAndCanResume(t *testing.T) {
	b := NewBroker()
	b.mustBacklog = 8
	slow := b.Subscribe()
	writer := b.SubscribeWith(SubscribeOptions{NeverCut: true})
	first, _ := func() (Event, bool) { b.Publish(answer(0)); return slow.Next(nil) }() // it read one
	if first.Head().Seq != 1 {
		t.Fatalf("first event Seq %d", first.Head().Seq)
	}
	for i := 1; i <= 8; i++ { // 8 unread: at the bound, not past it
		b.Publish(answer(i))
		b.Publish(delta(i)) // deltas do not count towards the bound
	}
	if slow.Err() != nil {
		t.Fatalf("cut at the bound, not past it: %v", slow.Err())
	}
	b.Publish(answer(9)) // the ninth unread one cuts it
	if _, ok := slow.Next(nil); ok {
		t.Error("Next after the cut returned an event: a cut subscription ends at once")
	}
	var lag *LagError
	if err := slow.Err(); !errors.As(err, &lag) || !errors.Is(err, ErrCut) {
		t.Fatalf("Err() = %v, want a *LagError matching ErrCut", err)
	}
	if want := (LagError{Queued: 9, Next: 2, Latest: 18}); *lag != want {
		t.Errorf("LagError = %+v, want %+v", *lag, want)
	}
	if len(b.subs) != 1 {
		t.Errorf("the broker still has %d subscribers, want the cut one forgotten", len(b.subs))
	}

	resumed := b.SubscribeWith(SubscribeOptions{From: lag.Next})
	b.Publish(answer(10))
	b.Close()
	if got := seqs(drain(t, resumed)); !cmp.Equal(got, seqRange(2, 19)) {
		t.Errorf("resumed from %d: seqs %v, want every one from 2 to 19", lag.Next, got)
	}
	if got := seqs(drain(t, writer)); !cmp.Equal(got, seqRange(1, 19)) {
		t.Errorf("never-cut subscriber: seqs %v, want every one", got)
	}
	if resumed.Err() != nil || writer.Err() != nil {
		t.Errorf("Err after Close: %v, %v; want nil (the run ended, nobody was cut)", resumed.Err(), writer.Err())
	}
}

// A never-cut subscriber keeps every must-deliver event however far it
// lags: the run's own writers depend on it.
func TestNeverCutSubscriberKeepsEveryEvent(t *testing.T) {
	b := NewBroker()
	b.mustBacklog = 4
	w := b.SubscribeWith(SubscribeOptions{NeverCut: true, Skip: Deltas})
	for i := range 100 {
		b.Publish(answer(i))
		b.Publish(delta(i))
	}
	b.Close()
	got := drain(t, w)
	if len(got) != 100 || w.Err() != nil {
		t.Errorf("got %d events, Err %v; want all 100 answers and no cut", len(got), w.Err())
	}
}

// A late subscriber from a sequence number gets the history from it, then
// the live stream, in order, with its skips applied to both.
func TestSubscribeFromReplaysHistoryThenLive(t *testing.T) {
	b := NewBroker()
	var published []Event
	for i := range 10 {
		published = append(published, b.Publish(answer(i)), b.Publish(delta(i)))
	}
	all := b.SubscribeWith(SubscribeOptions{From: 5})
	answers := b.SubscribeWith(SubscribeOptions{From: 5, Skip: Deltas})
	everything := b.SubscribeWith(SubscribeOptions{From: 1})
	for i := 10; i < 12; i++ {
		published = append(published, b.Publish(answer(i)), b.Publish(delta(i)))
	}
	b.Close()
	if diff := cmp.Diff(published[4:], drain(t, all)); diff != "" {
		t.Errorf("from 5 (-want +got):\n%s", diff)
	}
	if got, want := seqs(drain(t, answers)), []uint64{5, 7, 9, 11, 13, 15, 17, 19, 21, 23}; !cmp.Equal(got, want) {
		t.Errorf("from 5 without deltas: %v, want %v", got, want)
	}
	if diff := cmp.Diff(published, drain(t, everything)); diff != "" {
		t.Errorf("from 1 (-want +got):\n%s", diff)
	}
}

// Only the latest droppable events are kept for a late subscriber: the
// older ones are missing from its replay, which the gap in sequence
// numbers shows; no must-deliver event is.
func TestReplayLosesOnlyOldDeltasAndTheGapShowsIt(t *testing.T) {
	b := NewBroker()
	b.recentLimit = 3
	for i := range 5 {
		b.Publish(delta(i)) // seqs 1..5: only 3..5 are kept
	}
	b.Publish(answer(0)) // 6
	b.Publish(delta(5))  // 7: the ring now holds 4, 5, 7
	b.Close()
	got := seqs(drain(t, b.SubscribeWith(SubscribeOptions{From: 1})))
	if want := []uint64{4, 5, 6, 7}; !cmp.Equal(got, want) {
		t.Errorf("replay from 1: %v, want %v (deltas 1-3 forgotten, the answer kept)", got, want)
	}
}

// Past its bound the broker forgets the oldest half of its history; a
// subscription from a forgotten sequence number ends at once and says
// where the history now starts, and one from there gets all of it.
func TestSubscribeFromForgottenHistoryEndsAndSaysWhereItStarts(t *testing.T) {
	b := NewBroker()
	b.historyLimit = 4
	for i := range 10 {
		b.Publish(answer(i))
	}
	defer b.Close()
	if len(b.history) > 4 {
		t.Errorf("history holds %d events, want at most its bound of 4", len(b.history))
	}
	gone := b.SubscribeWith(SubscribeOptions{From: 1})
	if _, ok := gone.Next(nil); ok {
		t.Error("a subscription from forgotten history returned an event")
	}
	var he *HistoryError
	if err := gone.Err(); !errors.As(err, &he) || !errors.Is(err, ErrCut) {
		t.Fatalf("Err() = %v, want a *HistoryError matching ErrCut", err)
	}
	kept := b.SubscribeWith(SubscribeOptions{From: he.Kept})
	want := seqRange(he.Kept, 10)
	var got []uint64
	for range want {
		e, ok := kept.Next(nil)
		if !ok {
			t.Fatalf("from %d: ended after %v (%v)", he.Kept, got, kept.Err())
		}
		got = append(got, e.Head().Seq)
	}
	if !cmp.Equal(got, want) || he.Kept > 7 {
		t.Errorf("from %d: %v, want %v with at least the last 4 kept", he.Kept, got, want)
	}
}

// Subscribing from a sequence number while events are being published
// neither misses nor repeats one: the replay and the live stream meet
// exactly.
func TestSubscribeFromDuringPublishingHasNoGapAndNoRepeat(t *testing.T) {
	const n = 2000
	b := NewBroker()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			b.Publish(answer(i))
		}
		b.Close()
	})
	var subs []*Subscription
	for i := range 20 {
		subs = append(subs, b.SubscribeWith(SubscribeOptions{From: uint64(1 + i*n/20), NeverCut: true}))
	}
	wg.Wait()
	for i, s := range subs {
		from := uint64(1 + i*n/20)
		if got := seqs(drain(t, s)); !cmp.Equal(got, seqRange(from, n)) {
			t.Errorf("from %d: %d events, first %v, want every one from %d to %d", from, len(got), got[:min(3, len(got))], from, n)
		}
	}
}

// A subscription from a sequence number ahead of the broker receives
// nothing before it.
func TestSubscribeFromAheadWaitsForItsSequenceNumber(t *testing.T) {
	b := NewBroker()
	s := b.SubscribeWith(SubscribeOptions{From: 3})
	for i := range 4 {
		b.Publish(answer(i))
	}
	b.Close()
	if got := seqs(drain(t, s)); !cmp.Equal(got, []uint64{3, 4}) {
		t.Errorf("from 3: %v", got)
	}
}

// Durable sinks get every must-deliver event, in order, before any
// subscriber can read it (and before the view has it); deltas never reach
// them.
func TestPersistRunsBeforeDelivery(t *testing.T) {
	b := NewBroker()
	sub := b.Subscribe()
	closed := make(chan struct{})
	close(closed)
	var stored []uint64
	b.Persist(func(e Event) error {
		// Whatever the subscriber can read now was published earlier.
		for {
			got, ok := sub.Next(closed)
			if !ok {
				break
			}
			if got.Head().Seq >= e.Head().Seq {
				t.Errorf("seq %d readable while seq %d was being stored", got.Head().Seq, e.Head().Seq)
			}
		}
		if s := b.View().Snapshot(e.Head().Time); len(s.Answers) >= len(stored)+1 && e.Type() == TypeAnswerAccepted {
			t.Errorf("the view had answer seq %d before it was stored", e.Head().Seq)
		}
		stored = append(stored, e.Head().Seq)
		return nil
	})
	for i := range 5 {
		b.Publish(delta(i))
		b.Publish(answer(i))
	}
	b.Close()
	if want := []uint64{2, 4, 6, 8, 10}; !cmp.Equal(stored, want) {
		t.Errorf("stored %v, want the answers %v and no delta", stored, want)
	}
	drain(t, sub)
}

// A failing sink does not hold events back (a display still shows the
// run); PersistErr keeps the first error and counts the rest. Events
// published after Close reach no sink.
func TestPersistErrorsAreReportedNotFatal(t *testing.T) {
	b := NewBroker()
	calls := 0
	b.Persist(func(Event) error { calls++; return fmt.Errorf("disk full %d", calls) })
	sub := b.Subscribe()
	for i := range 3 {
		b.Publish(answer(i))
	}
	b.Close()
	b.Publish(answer(3))
	if got := len(drain(t, sub)); got != 3 {
		t.Errorf("delivered %d events, want all 3 despite the sink's errors", got)
	}
	if calls != 3 {
		t.Errorf("sink called %d times, want 3 (none after Close)", calls)
	}
	if err := b.PersistErr(); err == nil || err.Error() != "disk full 1 (and 2 more errors storing events)" {
		t.Errorf("PersistErr() = %v", err)
	}
}

// A client that goes away closes its subscription: it ends at once and
// the broker stops queueing for it.
func TestSubscriptionCloseLeavesTheBroker(t *testing.T) {
	b := NewBroker()
	defer b.Close()
	gone := b.Subscribe()
	stays := b.Subscribe()
	b.Publish(answer(0))
	gone.Close()
	gone.Close()
	b.Publish(answer(1))
	if e, ok := gone.Next(nil); ok {
		t.Errorf("Next after Close = %+v", e)
	}
	if gone.Err() != nil {
		t.Errorf("Err after Close = %v, want nil: it was not cut", gone.Err())
	}
	if len(b.subs) != 1 || b.subs[0] != stays {
		t.Errorf("broker subscribers: %d, want only the one that stayed", len(b.subs))
	}
}

// Whatever a long run publishes, with clients that never read, what the
// broker holds stays within its bounds.
func TestMemoryStaysBoundedForALongRun(t *testing.T) {
	b := NewBroker()
	b.historyLimit, b.recentLimit, b.mustBacklog, b.deltaBacklog = 64, 16, 32, 16
	var idle []*Subscription
	for range 5 {
		idle = append(idle, b.Subscribe())
	}
	for i := range 10000 {
		b.Publish(answer(i))
		for j := range 5 {
			b.Publish(delta(j))
		}
	}
	defer b.Close()
	if len(b.history) > 64 || len(b.recent) > 16 || len(b.subs) != 0 {
		t.Errorf("history %d (bound 64), recent %d (bound 16), %d idle subscribers kept (want them cut)",
			len(b.history), len(b.recent), len(b.subs))
	}
	for i, s := range idle {
		if len(s.queue)+len(s.replay) != 0 || !errors.Is(s.Err(), ErrCut) {
			t.Errorf("idle subscriber %d: %d events held, Err %v; want cut and emptied", i, len(s.queue), s.Err())
		}
	}
}
