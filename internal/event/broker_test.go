package event

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// drain reads a subscription until it ends. It fails the test if the
// subscription does not end within a generous bound (a hang is a bug).
func drain(t *testing.T, s *Subscription) []Event {
	t.Helper()
	var out []Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, ok := s.Next(nil)
			if !ok {
				return
			}
			out = append(out, e)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("subscription did not end after Close")
	}
	return out
}

func TestDroppableIsExactlyTheDeltaAndTickTypes(t *testing.T) {
	for _, typ := range Types {
		want := typ == TypeTextDelta || typ == TypeReasoningDelta || typ == TypeFinalDelta || typ == TypeToolProgress
		if got := typ.Droppable(); got != want {
			t.Errorf("%s.Droppable() = %v, want %v", typ, got, want)
		}
	}
}

func TestPublishStampsIncreasingSeqAndTime(t *testing.T) {
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	b := NewBroker()
	b.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	sub := b.Subscribe()

	given := time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)
	var returned []Event
	returned = append(returned, b.Publish(mk(Record{Type: TypeRunStarted})))
	returned = append(returned, b.Publish(mk(Record{Type: TypeTextDelta, Seq: 99}))) // a caller's Seq is overwritten
	returned = append(returned, b.Publish(mk(Record{Type: TypeAnswerAccepted, Time: given})))
	b.Close()
	got := drain(t, sub)

	if diff := cmp.Diff(returned, got); diff != "" {
		t.Errorf("delivered events differ from what Publish returned (-returned +delivered):\n%s", diff)
	}
	wantSeq := []uint64{1, 2, 3}
	for i, e := range got {
		if e.Head().Seq != wantSeq[i] {
			t.Errorf("event %d: Seq = %d, want %d", i, e.Head().Seq, wantSeq[i])
		}
	}
	if want := time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC); !got[0].Head().Time.Equal(want) {
		t.Errorf("first event Time = %v, want the broker clock %v", got[0].Head().Time, want)
	}
	if !got[1].Head().Time.After(got[0].Head().Time) {
		t.Errorf("second event Time %v not after first %v", got[1].Head().Time, got[0].Head().Time)
	}
	if !got[2].Head().Time.Equal(given) {
		t.Errorf("an event's own Time was replaced: got %v, want %v", got[2].Head().Time, given)
	}
}

func TestPublishWithRealClockSetsTime(t *testing.T) {
	b := NewBroker()
	before := time.Now()
	e := b.Publish(mk(Record{Type: TypeRunStarted}))
	if e.Head().Time.IsZero() || e.Head().Time.Before(before) {
		t.Errorf("Time = %v, want a time not before %v", e.Head().Time, before)
	}
	b.Close()
}

func TestSubscribersSeeEventsInPublishOrder(t *testing.T) {
	b := NewBroker()
	subs := []*Subscription{b.Subscribe(), b.Subscribe(), b.Subscribe()}
	types := []Type{TypeRunStarted, TypeTurnStarted, TypeTextDelta, TypeAnswerAccepted, TypeReasoningDelta, TypeVoteAccepted, TypeFinalDelta, TypeRunFinished}
	var want []Event
	for i := range 200 {
		want = append(want, b.Publish(mk(Record{Type: types[i%len(types)], Text: strconv.Itoa(i)})))
	}
	b.Close()
	for i, s := range subs {
		got := drain(t, s)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("subscriber %d (-published +seen):\n%s", i, diff)
		}
		if s.Dropped() != 0 {
			t.Errorf("subscriber %d dropped %d events below its backlog", i, s.Dropped())
		}
	}
}

func TestSubscriberSeesOnlyEventsPublishedAfterSubscribing(t *testing.T) {
	b := NewBroker()
	b.Publish(mk(Record{Type: TypeRunStarted, Text: "before"}))
	sub := b.Subscribe()
	after := b.Publish(mk(Record{Type: TypeRunFinished, Text: "after"}))
	b.Close()
	got := drain(t, sub)
	if diff := cmp.Diff([]Event{after}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnreadSubscriberLosesOnlyDeltasBeyondItsBacklog(t *testing.T) {
	const deltas = 5000
	deltaTypes := []Type{TypeTextDelta, TypeReasoningDelta, TypeFinalDelta}
	importantTypes := []Type{TypeAnswerAccepted, TypeVoteAccepted, TypeTurnEnded, TypeFinalAnswer}

	b := NewBroker()
	slow := b.Subscribe() // never read until the end
	var important []Event
	for i := range deltas {
		b.Publish(mk(Record{Type: deltaTypes[i%len(deltaTypes)], Text: strconv.Itoa(i)}))
		if i%100 == 99 {
			important = append(important, b.Publish(mk(Record{Type: importantTypes[len(important)%len(importantTypes)], Label: strconv.Itoa(len(important))})))
		}
	}
	b.Close()
	got := drain(t, slow)

	var gotImportant []Event
	nextDelta := 0
	lastSeq := uint64(0)
	for _, e := range got {
		if e.Head().Seq <= lastSeq {
			t.Fatalf("Seq %d delivered after %d: out of order", e.Head().Seq, lastSeq)
		}
		lastSeq = e.Head().Seq
		if !e.Type().Droppable() {
			gotImportant = append(gotImportant, e)
			continue
		}
		// The deltas that survive are the first ones, in order: only those
		// published once the backlog was full are lost.
		if text(e) != strconv.Itoa(nextDelta) {
			t.Fatalf("delta %q delivered, want delta %d (deltas must be lost only beyond the backlog)", text(e), nextDelta)
		}
		nextDelta++
	}
	if diff := cmp.Diff(important, gotImportant); diff != "" {
		t.Errorf("important events lost or reordered (-published +seen):\n%s", diff)
	}
	dropped := slow.Dropped()
	if dropped == 0 {
		t.Fatal("Dropped() = 0, want deltas beyond the backlog dropped")
	}
	if uint64(nextDelta)+dropped != deltas {
		t.Errorf("delivered %d + dropped %d deltas != %d published", nextDelta, dropped, deltas)
	}
	if nextDelta > deltaBacklog {
		t.Errorf("%d deltas queued for an unread subscriber, want at most the backlog of %d", nextDelta, deltaBacklog)
	}
	if nextDelta == 0 {
		t.Error("no delta delivered at all; the backlog should hold the first ones")
	}
}

func TestSlowSubscriberDoesNotCostOthersEvents(t *testing.T) {
	b := NewBroker()
	slow := b.Subscribe()
	fast := b.Subscribe()
	var seen []Event
	for i := range 3000 {
		b.Publish(mk(Record{Type: TypeTextDelta, Text: strconv.Itoa(i)}))
		e, ok := fast.Next(nil) // read as we go: never behind
		if !ok {
			t.Fatal("fast subscriber ended early")
		}
		seen = append(seen, e)
	}
	b.Close()
	if len(seen) != 3000 || fast.Dropped() != 0 {
		t.Errorf("fast subscriber saw %d deltas, dropped %d; want all 3000, none dropped", len(seen), fast.Dropped())
	}
	if slow.Dropped() == 0 {
		t.Error("slow subscriber dropped nothing, want deltas beyond its backlog dropped")
	}
	drain(t, slow)
}

func TestPublishNeverBlocksWithoutReaders(t *testing.T) {
	tests := []struct {
		name string
		subs int
	}{
		{"no subscriber", 0},
		{"subscribers that never read", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBroker()
			for range tt.subs {
				b.Subscribe()
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 20000 {
					typ := TypeTextDelta
					if i%10 == 0 {
						typ = TypeAnswerAccepted
					}
					b.Publish(mk(Record{Type: typ}))
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Publish blocked on subscribers that do not read")
			}
			b.Close()
		})
	}
}

func TestCloseEndsNextAfterTheQueueIsDrained(t *testing.T) {
	b := NewBroker()
	sub := b.Subscribe()
	var want []Event
	for i := range 5 {
		want = append(want, b.Publish(mk(Record{Type: TypeAnswerAccepted, Text: strconv.Itoa(i)})))
	}
	b.Close()
	b.Close() // a second Close is harmless
	for i, w := range want {
		e, ok := sub.Next(nil)
		if !ok {
			t.Fatalf("Next ended after %d events, want all %d queued before Close", i, len(want))
		}
		if diff := cmp.Diff(w, e); diff != "" {
			t.Errorf("event %d (-want +got):\n%s", i, diff)
		}
	}
	if e, ok := sub.Next(nil); ok {
		t.Errorf("Next after the drained queue = %+v, ok; want ok=false", e)
	}
	if e, ok := sub.Next(nil); ok { // and it stays ended
		t.Errorf("second Next after the end = %+v, ok; want ok=false", e)
	}
}

func TestCloseWakesABlockedNext(t *testing.T) {
	b := NewBroker()
	sub := b.Subscribe()
	type result struct {
		e  Event
		ok bool
	}
	got := make(chan result, 1)
	go func() {
		e, ok := sub.Next(nil)
		got <- result{e, ok}
	}()
	b.Close()
	select {
	case r := <-got:
		if r.ok {
			t.Errorf("Next = %+v, ok; want ok=false after Close", r.e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still blocked after Close")
	}
}

func TestPublishWakesABlockedNext(t *testing.T) {
	b := NewBroker()
	defer b.Close()
	sub := b.Subscribe()
	got := make(chan Event, 1)
	go func() {
		e, _ := sub.Next(nil)
		got <- e
	}()
	want := b.Publish(mk(Record{Type: TypeVoteAccepted, Agent: "a"}))
	select {
	case e := <-got:
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next not woken by Publish")
	}
}

func TestPublishAfterCloseIsNumberedButNotDelivered(t *testing.T) {
	b := NewBroker()
	sub := b.Subscribe()
	first := b.Publish(mk(Record{Type: TypeRunStarted}))
	b.Close()
	late := b.Publish(mk(Record{Type: TypeRunFinished}))
	if late.Head().Seq <= first.Head().Seq {
		t.Errorf("Seq after Close = %d, want > %d", late.Head().Seq, first.Head().Seq)
	}
	got := drain(t, sub)
	if diff := cmp.Diff([]Event{first}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSubscribeAfterCloseEndsAtOnce(t *testing.T) {
	b := NewBroker()
	b.Publish(mk(Record{Type: TypeRunStarted}))
	b.Close()
	sub := b.Subscribe()
	if sub == nil {
		t.Fatal("Subscribe after Close returned nil")
	}
	done := make(chan bool, 1)
	go func() {
		_, ok := sub.Next(nil)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("Next on a subscription made after Close returned an event")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next on a subscription made after Close blocked")
	}
}

func TestNextWithClosedCancelReturnsNotOK(t *testing.T) {
	b := NewBroker()
	defer b.Close()
	sub := b.Subscribe()
	cancel := make(chan struct{})
	close(cancel)
	if e, ok := sub.Next(cancel); ok {
		t.Errorf("Next(closed cancel) = %+v, ok; want ok=false", e)
	}
	// Cancelling one Next does not end the subscription.
	want := b.Publish(mk(Record{Type: TypeAnswerAccepted}))
	e, ok := sub.Next(nil)
	if !ok || e.Head().Seq != want.Head().Seq {
		t.Errorf("Next after a cancelled Next = %+v, %v; want the published event", e, ok)
	}
}

func TestCancelWakesABlockedNext(t *testing.T) {
	b := NewBroker()
	defer b.Close()
	sub := b.Subscribe()
	cancel := make(chan struct{})
	done := make(chan bool, 1)
	go func() {
		_, ok := sub.Next(cancel)
		done <- ok
	}()
	close(cancel)
	select {
	case ok := <-done:
		if ok {
			t.Error("Next returned ok=true after cancel, with nothing published")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still blocked after cancel was closed")
	}
}

func TestConcurrentPublishersAndSubscribers(t *testing.T) {
	const (
		publishers = 4
		perPub     = 500
		readers    = 4
	)
	b := NewBroker()
	subs := make([]*Subscription, readers)
	for i := range subs {
		subs[i] = b.Subscribe()
	}
	seen := make([][]Event, readers)
	var readWG sync.WaitGroup
	for i, s := range subs {
		readWG.Go(func() {
			for {
				e, ok := s.Next(nil)
				if !ok {
					return
				}
				seen[i] = append(seen[i], e)
			}
		})
	}
	var pubWG sync.WaitGroup
	for p := range publishers {
		pubWG.Go(func() {
			for i := range perPub {
				b.Publish(mk(Record{Type: TypeAnswerAccepted, Agent: fmt.Sprint(p), Text: strconv.Itoa(i)}))
				b.Publish(mk(Record{Type: TypeTextDelta, Agent: fmt.Sprint(p)}))
			}
		})
	}
	pubWG.Wait()
	b.Close()
	readWG.Wait()

	for r, events := range seen {
		var lastSeq uint64
		next := make([]int, publishers)
		important := 0
		for _, e := range events {
			if e.Head().Seq <= lastSeq {
				t.Fatalf("reader %d: Seq %d after %d", r, e.Head().Seq, lastSeq)
			}
			lastSeq = e.Head().Seq
			if e.Type() != TypeAnswerAccepted {
				continue
			}
			important++
			p, _ := strconv.Atoi(AgentOf(e))
			if text(e) != strconv.Itoa(next[p]) {
				t.Fatalf("reader %d: publisher %d event %s, want %d (publisher order broken)", r, p, text(e), next[p])
			}
			next[p]++
		}
		if important != publishers*perPub {
			t.Errorf("reader %d saw %d important events, want %d", r, important, publishers*perPub)
		}
		if deltas := len(events) - important; uint64(deltas)+subs[r].Dropped() != publishers*perPub {
			t.Errorf("reader %d: %d deltas seen + %d dropped != %d published", r, deltas, subs[r].Dropped(), publishers*perPub)
		}
	}
	if last := b.Publish(mk(Record{Type: TypeRunFinished})); last.Head().Seq != 2*publishers*perPub+1 {
		t.Errorf("Seq after %d publishes = %d: numbers skipped or repeated", 2*publishers*perPub, last.Head().Seq)
	}
}

func TestSubscriptionSkipsTheTypesItLeavesOut(t *testing.T) {
	b := NewBroker()
	all := b.Subscribe()
	noDeltas := b.Subscribe(Deltas...)
	finalOnly := b.Subscribe(TypeTextDelta, TypeReasoningDelta)
	for _, typ := range []Type{TypeRunStarted, TypeTextDelta, TypeReasoningDelta, TypeAnswerAccepted, TypeFinalDelta, TypeRunFinished} {
		b.Publish(mk(Record{Type: typ}))
	}
	b.Close()
	types := func(es []Event) (out []Type) {
		for _, e := range es {
			out = append(out, e.Type())
		}
		return out
	}
	for _, tc := range []struct {
		name string
		sub  *Subscription
		want []Type
	}{
		{"all", all, []Type{TypeRunStarted, TypeTextDelta, TypeReasoningDelta, TypeAnswerAccepted, TypeFinalDelta, TypeRunFinished}},
		{"no deltas", noDeltas, []Type{TypeRunStarted, TypeAnswerAccepted, TypeRunFinished}},
		{"final deltas only", finalOnly, []Type{TypeRunStarted, TypeAnswerAccepted, TypeFinalDelta, TypeRunFinished}},
	} {
		if diff := cmp.Diff(tc.want, types(drain(t, tc.sub))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if fmt.Sprint(Deltas) != fmt.Sprint([]Type{TypeTextDelta, TypeReasoningDelta, TypeFinalDelta}) {
		t.Errorf("Deltas = %v", Deltas)
	}
}

// mk builds an event of any type from its record form.
func mk(r Record) Event {
	e, err := FromRecord(r)
	if err != nil {
		panic(err)
	}
	return e
}

// text is the Text of an event's record (deltas, answers' content).
func text(e Event) string { return ToRecord(e).Text }
