package runlog

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/event"
)

// journalSeqs are the sequence numbers in coordination_events.jsonl now.
func journalSeqs(t *testing.T, dir string) []uint64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, journalName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r event.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		out = append(out, r.Seq)
	}
	return out
}

// With Persist as the broker's sink, every event but the deltas is in the
// journal before any subscriber sees it — a display reading the journal
// at the moment an event reaches it finds the event there — and the
// writer's own subscription does not journal it again.
func TestPersistJournalsBeforeDeliveryAndOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newTestWriter(t, Metadata{Question: "What is 2+2?"})
	b := event.NewBroker()
	b.Persist(w.Persist)
	logSub := b.SubscribeWith(event.SubscribeOptions{NeverCut: true})
	display := b.Subscribe(event.Deltas...)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(context.Background(), logSub) })
	var missing []uint64
	wg.Go(func() {
		for {
			e, ok := display.Next(nil)
			if !ok {
				return
			}
			seqs := journalSeqs(t, w.Dir())
			if len(seqs) == 0 || seqs[len(seqs)-1] < e.Head().Seq {
				missing = append(missing, e.Head().Seq)
			}
		}
	})
	var want []uint64
	for _, r := range threeAgentRun() {
		r.Seq, r.Time = 0, time.Time{}
		if e := b.Publish(ev(r)); !e.Type().Droppable() {
			want = append(want, e.Head().Seq)
		}
	}
	b.Close()
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("events %v reached the display before the journal", missing)
	}
	got := journalSeqs(t, w.Dir())
	if len(got) != len(want) {
		t.Fatalf("journal has %d events %v, want each of the %d once: %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("journal seqs %v, want %v", got, want)
		}
	}
}
