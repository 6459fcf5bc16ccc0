package llmsim

import (
	"fmt"
	"testing"
)

func TestKeepRequestsBoundsTheLog(t *testing.T) {
	var l requestLog
	l.keep = 3
	for i := 1; i <= 10; i++ {
		if id := l.add(Record{Model: fmt.Sprint(i)}); id != i {
			t.Fatalf("record %d got ID %d", i, id)
		}
		l.update(i, func(r *Record) { r.Outcome = OutcomeCompleted })
	}
	recs := l.snapshot()
	if len(recs) < 3 || len(recs) > 6 || recs[len(recs)-1].ID != 10 || recs[len(recs)-1].Model != "10" {
		t.Fatalf("kept %+v, want between 3 and 6 records ending with #10", recs)
	}
	for _, r := range recs {
		if r.Outcome != OutcomeCompleted || r.Model != fmt.Sprint(r.ID) {
			t.Errorf("record %+v: updates went to the wrong record", r)
		}
	}
	l.update(1, func(r *Record) { t.Error("a record the log let go was updated") })
}
