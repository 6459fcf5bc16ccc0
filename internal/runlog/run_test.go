package runlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/event"
)

func TestRunConsumesBrokerUntilClosed(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newTestWriter(t, Metadata{Question: "What is 2+2?"})
	b := event.NewBroker()
	sub := b.Subscribe()
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background(), sub) }()
	for _, e := range threeAgentRun() {
		e.Seq, e.Time = 0, time.Time{} // the broker stamps them
		b.Publish(ev(e))
	}
	b.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the broker closed")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(w.Dir(), "final", "beta", "answer.txt")); got != "The answer is 4." {
		t.Errorf("final answer = %q", got)
	}
	var vs voteSummary
	readJSON(t, filepath.Join(w.Dir(), "vote.json"), &vs)
	if vs.Winner != "beta" || vs.Tally["beta"] != 2 || len(vs.Votes) != 2 {
		t.Errorf("vote.json = %+v", vs)
	}
	var ef eventsFile
	readJSON(t, filepath.Join(w.Dir(), "coordination_events.json"), &ef)
	for i, e := range ef.Events {
		if e.Seq == 0 || (i > 0 && e.Seq <= ef.Events[i-1].Seq) || e.Type.Droppable() {
			t.Errorf("event %d: seq %d type %s", i, e.Seq, e.Type)
		}
	}
	if len(ef.Events) != 26 {
		t.Errorf("%d events listed, want 26", len(ef.Events))
	}
}

func TestRunStopsOnContextCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newTestWriter(t, Metadata{})
	b := event.NewBroker()
	defer b.Close()
	sub := b.Subscribe()
	b.Publish(ev(event.Record{Type: event.TypeRunStarted, Text: "queued before cancel"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := w.Run(ctx, sub)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	// The queued event was still handled: Next prefers its queue.
	if q := w.Status().Meta.Question; q != "queued before cancel" {
		t.Errorf("question = %q", q)
	}
}

func TestTickerRewritesStatus(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newTestWriter(t, Metadata{})
	ticked := make(chan struct{}, 1)
	w.statusEvery = time.Millisecond
	w.onTick = func() {
		select {
		case ticked <- struct{}{}:
		default:
		}
	}
	later := t0.Add(42 * time.Second)
	w.now = func() time.Time { return later }

	b := event.NewBroker()
	sub := b.Subscribe()
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background(), sub) }()
	select {
	case <-ticked:
	case <-time.After(10 * time.Second):
		t.Fatal("no tick")
	}
	// No event was published: only the ticker can have written this.
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	if !st.Meta.UpdatedAt.Equal(later) || st.Meta.ElapsedSeconds != 42 {
		t.Errorf("status meta = %+v, want updated_at %v, elapsed 42", st.Meta, later)
	}
	b.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// No temporary files are left behind by the atomic rewrites.
	ents, _ := os.ReadDir(w.Dir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

func TestAttemptsLayout(t *testing.T) {
	w := newTestWriter(t, Metadata{Attempts: true, Agents: team[:2]})
	var s script
	s.add(event.Record{Type: event.TypeRunStarted, Attempt: 1, Text: "q"})
	s.add(event.Record{Type: event.TypeTurnStarted, Attempt: 1, Agent: "alpha", Text: "p1"})
	s.add(event.Record{Type: event.TypeTextDelta, Attempt: 1, Agent: "alpha", Text: "first try"})
	s.add(event.Record{Type: event.TypeAnswerAccepted, Attempt: 1, Agent: "alpha", Text: "A1", Label: "agent1.1"})
	s.add(event.Record{Type: event.TypeVoteAccepted, Attempt: 1, Agent: "beta", Target: "alpha", TargetLabel: "agent1", Reason: "ok"})
	s.add(event.Record{Type: event.TypeVoteAccepted, Attempt: 1, Agent: "alpha", Target: "alpha", TargetLabel: "agent1", Reason: "ok"})
	s.add(event.Record{Type: event.TypeWinnerSelected, Attempt: 1, Agent: "alpha", Votes: map[string]int{"alpha": 2}, Reason: "most votes"})
	s.add(event.Record{Type: event.TypeFinalAnswer, Attempt: 1, Agent: "alpha", Text: "final 1", Reason: "presentation"})
	s.add(event.Record{Type: event.TypePostEvaluation, Attempt: 1, Agent: "alpha", Text: "restart", Reason: "incomplete"})
	s.add(event.Record{Type: event.TypeRunRestarted, Attempt: 1, Reason: "incomplete"})
	s.add(event.Record{Type: event.TypeTurnStarted, Attempt: 2, Agent: "beta", Text: "p2"})
	s.add(event.Record{Type: event.TypeAnswerAccepted, Attempt: 2, Agent: "beta", Text: "B1", Label: "agent1.1"})
	s.add(event.Record{Type: event.TypeVoteAccepted, Attempt: 2, Agent: "alpha", Target: "beta", TargetLabel: "agent1", Reason: "better"})
	s.add(event.Record{Type: event.TypeVoteAccepted, Attempt: 2, Agent: "beta", Target: "beta", TargetLabel: "agent1", Reason: "mine"})
	s.add(event.Record{Type: event.TypeWinnerSelected, Attempt: 2, Agent: "beta", Reason: "most votes"})
	s.add(event.Record{Type: event.TypeFinalAnswer, Attempt: 2, Agent: "beta", Text: "final 2", Reason: "presentation"})
	s.add(event.Record{Type: event.TypePostEvaluation, Attempt: 2, Agent: "beta", Text: "submit"})
	s.add(event.Record{Type: event.TypeRunFinished, Attempt: 2, Status: "completed"})
	for _, e := range s.evs {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := w.Dir()
	for _, p := range []string{
		"attempt_1/agent_alpha", "attempt_1/agent_beta", "attempt_1/agent_outputs/alpha.txt", "attempt_1/final/alpha/answer.txt", "attempt_1/vote.json",
		"attempt_2/agent_beta", "attempt_2/agent_alpha", "attempt_2/agent_outputs/alpha.txt", "attempt_2/final/beta/answer.txt", "attempt_2/vote.json",
		"final/beta/answer.txt", "vote.json", "status.json", "coordination_events.json", "coordination_table.txt", "execution_metadata.yaml", "massgen.log",
	} {
		if _, err := os.Stat(filepath.Join(d, p)); err != nil {
			t.Error(err)
		}
	}
	for _, p := range []string{"agent_alpha", "agent_outputs", "final/alpha"} {
		if _, err := os.Stat(filepath.Join(d, p)); !os.IsNotExist(err) {
			t.Errorf("%s should not exist (%v)", p, err)
		}
	}
	if got := read(t, filepath.Join(d, "final", "beta", "answer.txt")); got != "final 2" {
		t.Errorf("top final = %q", got)
	}
	if got := read(t, filepath.Join(d, "attempt_1", "final", "alpha", "answer.txt")); got != "final 1" {
		t.Errorf("attempt 1 final = %q", got)
	}
	if w.AnswerFile() != filepath.Join(d, "final", "beta", "answer.txt") {
		t.Errorf("AnswerFile = %q", w.AnswerFile())
	}
	var v1, top voteSummary
	readJSON(t, filepath.Join(d, "attempt_1", "vote.json"), &v1)
	readJSON(t, filepath.Join(d, "vote.json"), &top)
	if v1.Winner != "alpha" || v1.Tally["alpha"] != 2 || top.Winner != "beta" || top.Tally["beta"] != 2 || top.Tally["alpha"] != 0 {
		t.Errorf("vote.json attempt 1 = %+v, top = %+v", v1, top)
	}
	st := w.Status()
	if st.Meta.Attempt != 2 || st.Coordination.AnswersTotal != 2 || st.Coordination.Epoch != 1 || st.Agents["alpha"].AnswerCount != 0 {
		t.Errorf("status = %+v", st)
	}
	table := read(t, filepath.Join(d, "coordination_table.txt"))
	for _, s := range []string{"=== Attempt 1 ===", "=== Attempt 2 ===", "Orchestration restarted: incomplete.", "post-eval: restart — incomplete", "Winner: beta"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
}

func TestTableFitsManyAgents(t *testing.T) {
	var agents []AgentInfo
	for _, id := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"} {
		agents = append(agents, AgentInfo{ID: id, Backend: "openrouter", Model: "some-provider/a-very-long-model-name-v2"})
	}
	w := newTestWriter(t, Metadata{Agents: agents})
	for i, a := range agents {
		e := event.Record{Type: event.TypeActionRejected, Agent: a.ID, Reason: strings.Repeat("averyveryverylongwordwithoutspaces ", 3)}
		if i%2 == 0 {
			e = event.Record{Type: event.TypeVoteAccepted, Agent: a.ID, Target: "a1", TargetLabel: "agent1", Reason: "because it is thorough and correct"}
		}
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	table := w.renderTable()
	for i, l := range strings.Split(table, "\n") {
		if n := len([]rune(l)); n > 160 {
			t.Errorf("line %d is %d wide", i+1, n)
		}
	}
	if !strings.Contains(table, "| a1 ") {
		t.Errorf("table:\n%s", table)
	}
}

func TestWrap(t *testing.T) {
	got := wrap("voted agent1 (alpha) — because it is right", 12)
	want := []string{"voted agent1", "(alpha) —", "because it", "is right"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q", got)
	}
	if got := wrap("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Errorf("hard wrap = %q", got)
	}
	if got := wrap("", 4); len(got) != 1 || got[0] != "" {
		t.Errorf("empty wrap = %q", got)
	}
}
