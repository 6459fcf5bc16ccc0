package event

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkPublishPersist measures what persist-then-deliver costs
// Publish: the same stream (a run's mix, by default 50 deltas per
// must-deliver event, then deltas alone) published to a broker without
// sinks and to one whose sink writes each must-deliver event's JSON record
// to a file with one write(2), as the log writer's sink does. The two are
// timed alternately in the same run, so the ratio does not depend on the
// machine's load; it reports ns/event of each, their ratio, and what
// storing costs per must-deliver event.
//
//	go test -run '^$' -bench PublishPersist ./internal/event/
func BenchmarkPublishPersist(b *testing.B) {
	for _, tc := range []struct {
		name     string
		perMust  int // deltas per must-deliver event; 0: deltas only
		batchLen int
	}{{"mix=50deltas/answer", 50, 51}, {"deltas-only", 0, 51}} {
		b.Run(tc.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "journal.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			sink := func(e Event) error {
				var buf bytes.Buffer
				if err := json.NewEncoder(&buf).Encode(ToRecord(e)); err != nil {
					return err
				}
				_, err := f.Write(buf.Bytes())
				return err
			}
			batch := make([]Event, tc.batchLen)
			for i := range batch {
				batch[i] = mk(Record{Type: TypeTextDelta, Agent: "a", Text: "token "})
				if tc.perMust > 0 && i%(tc.perMust+1) == tc.perMust {
					batch[i] = mk(Record{Type: TypeToolCalled, Agent: "a", Text: "read_file", Args: `{"path":"x"}`, Result: "ok"})
				}
			}
			plain, durable := NewBroker(), NewBroker()
			durable.Persist(sink)
			// A reader on each, drained between batches (untimed), as a
			// display is.
			subs := []*Subscription{plain.Subscribe(), durable.Subscribe()}
			closed := make(chan struct{})
			close(closed)
			var took [2]time.Duration
			b.ResetTimer()
			for range b.N {
				for k, br := range []*Broker{plain, durable} {
					start := time.Now()
					for _, e := range batch {
						br.Publish(e)
					}
					took[k] += time.Since(start)
					for _, ok := subs[k].Next(closed); ok; _, ok = subs[k].Next(closed) {
					}
				}
			}
			n := float64(b.N * len(batch))
			b.ReportMetric(float64(took[0].Nanoseconds())/n, "ns/event-plain")
			b.ReportMetric(float64(took[1].Nanoseconds())/n, "ns/event-persisted")
			b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "persisted/plain")
			if tc.perMust > 0 {
				musts := float64(b.N * (len(batch) / (tc.perMust + 1)))
				b.ReportMetric(float64((took[1]-took[0]).Nanoseconds())/musts, "ns/stored-event")
			}
			plain.Close()
			durable.Close()
		})
	}
}
