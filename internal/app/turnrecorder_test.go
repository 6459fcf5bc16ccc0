package app

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/store"
)

// A session turn's recorder is the broker's durable sink: an answer or a
// vote is in the sessions database by the time any subscriber sees it;
// the answers a resumed turn carries (recorded with the turn, and
// accepted again as the run starts) are not recorded twice; the winner's
// label is kept for the turn's end.
func TestTurnRecorderStoresBeforeDeliveryAndOnce(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sess, err := st.NewSession(ctx, t0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	carried := []store.Answer{{Agent: "a", Label: "agent1.1", Content: "4", At: t0}}
	n, err := st.BeginTurn(ctx, sess.ID, "What is 2+2?", "", 1, t0, carried...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &turnRecorder{st: st, session: sess.ID, turn: n, ctx: ctx, carried: carried}

	b := event.NewBroker()
	b.Persist(func(e event.Event) error {
		err := rec.persist(e)
		if err != nil {
			t.Error(err)
		}
		return err
	})
	sub := b.Subscribe(event.Deltas...)
	var wg sync.WaitGroup
	var unstored []string
	wg.Go(func() {
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			turns, err := st.Turns(ctx, sess.ID)
			if err != nil {
				t.Error(err)
				return
			}
			tn := turns[len(turns)-1]
			switch e := e.(type) {
			case event.AnswerAccepted:
				if !slices.ContainsFunc(tn.Answers, func(a store.Answer) bool { return a.Label == e.Label && a.Content == e.Content }) {
					unstored = append(unstored, "answer "+e.Label)
				}
			case event.VoteAccepted:
				if len(tn.Votes) == 0 {
					unstored = append(unstored, "vote of "+e.Agent)
				}
			}
		}
	})
	b.Publish(event.AnswerAccepted{Agent: "a", Label: "agent1.1", Content: "4"}) // the carried one, again
	b.Publish(event.AnswerAccepted{Agent: "b", Label: "agent2.1", Content: "four"})
	b.Publish(event.VoteAccepted{Agent: "a", Target: "b", TargetAnswer: "agent2.1", Reason: "same"})
	b.Publish(event.WinnerSelected{Agent: "b", Label: "agent2.1"})
	b.Close()
	wg.Wait()

	if len(unstored) > 0 {
		t.Errorf("seen by a subscriber before they were stored: %v", unstored)
	}
	turns, err := st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, a := range turns[0].Answers {
		labels = append(labels, a.Label)
	}
	if len(labels) != 2 || labels[0] != "agent1.1" || labels[1] != "agent2.1" {
		t.Errorf("stored answers %v, want the carried agent1.1 once, then agent2.1", labels)
	}
	if len(turns[0].Votes) != 1 || turns[0].Votes[0].TargetLabel != "agent2.1" {
		t.Errorf("stored votes %+v, want a's vote for agent2.1", turns[0].Votes)
	}
	if rec.winner() != "agent2.1" {
		t.Errorf("winner label %q, want agent2.1", rec.winner())
	}
}
