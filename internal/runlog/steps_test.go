package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
)

func TestStepTimestampsAreUnique(t *testing.T) {
	w := newTestWriter(t, Metadata{})
	at := t0.Add(time.Second)
	for i, text := range []string{"one", "two", "three"} {
		e := event.Record{Seq: uint64(i + 1), Time: at, Type: event.TypeAnswerAccepted, Agent: "alpha", Text: text}
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(w.Dir(), "agent_alpha")
	for name, want := range map[string]string{
		"20250304_102031_123456":   "one",
		"20250304_102031_123456_2": "two",
		"20250304_102031_123456_3": "three",
	} {
		if got := read(t, filepath.Join(dir, name, "answer.txt")); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestUnsafeAgentIDsStayInsideTheLogDir(t *testing.T) {
	for id, want := range map[string]string{"../x": ".._x", "a/b": "a_b", "..": "__", "": "_", "agent 1": "agent_1", "ok-1.2_z": "ok-1.2_z"} {
		if got := safeName(id); got != want {
			t.Errorf("safeName(%q) = %q, want %q", id, got, want)
		}
	}
	w := newTestWriter(t, Metadata{Agents: []AgentInfo{}})
	if err := w.Handle(ev(event.Record{Type: event.TypeAnswerAccepted, Agent: "../../evil", Text: "x"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), "agent_.._.._evil")); err != nil {
		t.Error(err)
	}
}

func TestCloseWithoutRunFinishedIsInterrupted(t *testing.T) {
	w := newTestWriter(t, Metadata{})
	if err := w.Handle(ev(event.Record{Type: event.TypeRunStarted, Text: "q"})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if md := read(t, filepath.Join(w.Dir(), "execution_metadata.yaml")); !strings.Contains(md, "question: q\n") {
		t.Errorf("question from RunStarted not in metadata:\n%s", md)
	}
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	if st.Meta.Status != "interrupted" {
		t.Errorf("status = %q", st.Meta.Status)
	}
	for _, f := range []string{"coordination_events.json", "coordination_table.txt", "vote.json"} {
		if _, err := os.Stat(filepath.Join(w.Dir(), f)); err != nil {
			t.Error(err)
		}
	}
	if w.AnswerFile() != "" {
		t.Errorf("AnswerFile = %q without a final answer", w.AnswerFile())
	}
}

func TestWriteErrorsAreReturned(t *testing.T) {
	w := newTestWriter(t, Metadata{})
	// A file where agent_alpha/ should go makes the step write fail.
	if err := os.WriteFile(filepath.Join(w.Dir(), "agent_alpha"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(ev(event.Record{Type: event.TypeAnswerAccepted, Agent: "alpha", Text: "x"})); err == nil {
		t.Error("Handle succeeded although agent_alpha is a file")
	}
	if st := w.Status(); st.Agents["alpha"].AnswerCount != 1 {
		t.Errorf("view not updated after a failed write: %+v", st.Agents["alpha"])
	}
}

func TestTimeouts(t *testing.T) {
	w := newTestWriter(t, Metadata{})
	for _, e := range []event.Record{
		{Type: event.TypeTurnStarted, Agent: "alpha", Text: "p"},
		{Type: event.TypeTimeout, Agent: "alpha"},
		{Type: event.TypeTimeout, Time: t0.Add(time.Hour)},
		{Type: event.TypeRunFinished, Status: "timeout", Err: "no answer before the deadline"},
	} {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	st := w.Status()
	if st.Meta.Status != "timeout" || st.Agents["alpha"].LastError != "turn timeout" {
		t.Errorf("status = %+v", st)
	}
	table := w.renderTable()
	for _, s := range []string{"Run timed out at 11:20:30.", "Status: timeout — no answer before the deadline", "Winner: none", "Votes: none"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
	if cols := tableColumns(table, 3); !strings.Contains(cols[0], "timeout") {
		t.Errorf("alpha column = %q", cols[0])
	}
}
