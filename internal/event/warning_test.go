package event

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAWarningRoundTripsThroughItsRecord(t *testing.T) {
	for _, w := range []Warning{
		{Text: "agent critic goes without MCP server fetch: it did not start"},
		{Where: "team.yaml:12:3", Text: "orchestrator.foo: ignored (and 2 more like it)"},
		{Agent: "critic", Text: "its tools run outside the sandbox"},
	} {
		e := Stamped(w, 7, time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
		data, err := json.Marshal(ToRecord(e))
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != TypeWarning || r.Text != w.Text || r.Where != w.Where || r.Agent != w.Agent || r.V != SchemaVersion {
			t.Errorf("record of %+v = %s", w, data)
		}
		back, err := FromRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := back.(Warning); got.Text != w.Text || got.Where != w.Where || got.Agent != w.Agent || got.Seq != 7 {
			t.Errorf("FromRecord(ToRecord(%+v)) = %+v", w, got)
		}
	}
}

func TestAWarningReadsAsTheCommandLinePrintsIt(t *testing.T) {
	for _, c := range []struct {
		w    Warning
		want string
	}{
		{Warning{Text: "writing logs: disk full"}, "warning: writing logs: disk full"},
		{Warning{Where: "team.yaml:3", Text: "ui.foo: ignored"}, "team.yaml:3: warning: ui.foo: ignored"},
	} {
		if got := Describe(c.w); got != c.want {
			t.Errorf("Describe(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}

func TestAWarningIsNeverDropped(t *testing.T) {
	if TypeWarning.Droppable() {
		t.Fatal("a warning may be dropped for a slow reader")
	}
	b := NewBroker()
	sub := b.Subscribe()
	b.Publish(Warning{Text: "one"})
	b.Close()
	e, ok := sub.Next(nil)
	if !ok || e.Type() != TypeWarning || e.Head().Seq != 1 {
		t.Fatalf("got %v, %v", e, ok)
	}
}
