package runlog

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// A process that dies mid-run leaves status.json saying "running": the
// file must name the process, so the run is recognisable as dead, and
// every event accepted so far must already be on disk.
func TestACrashedRunIsRecognisableAndItsEventsAreOnDisk(t *testing.T) {
	w := newTestWriter(t, Metadata{Question: "q"})
	evs := threeAgentRun()[:12] // up to beta's first answer; then the process "dies"
	for _, e := range evs {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	host, _ := os.Hostname()
	if st.Meta.Status != "running" || st.Meta.PID != os.Getpid() || st.Meta.Host != host {
		t.Fatalf("status.json meta = %+v, want running with pid %d on %s", st.Meta, os.Getpid(), host)
	}
	if Dead(st) {
		t.Error("Dead = true for a run whose process (this one) is alive")
	}
	// The same file written by a process that has exited.
	child := exec.Command(os.Args[0], "-test.run=^$")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	st.Meta.PID = child.ProcessState.Pid()
	if !Dead(st) {
		t.Errorf("Dead = false for a running status.json whose process %d has exited", st.Meta.PID)
	}
	st.Meta.Status = "completed"
	if Dead(st) {
		t.Error("Dead = true for a finished run")
	}

	// coordination_events.jsonl holds every non-delta event handled so far.
	f, err := os.Open(filepath.Join(w.Dir(), journalName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []event.Type
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r event.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, r.Type)
	}
	var want []event.Type
	for _, e := range evs {
		if !e.Type.Droppable() {
			want = append(want, e.Type)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("jsonl has %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("jsonl line %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// An agent whose turn has sent nothing for a while shows as stalled in
// status.json, with the seconds since its last activity; failed turns are
// counted.
func TestStatusShowsAHungTurnAsStalled(t *testing.T) {
	w := newTestWriter(t, Metadata{})
	w.view.SetStallAfter(event.DefaultStallAfter)
	now := t0.Add(100 * time.Second)
	w.now = func() time.Time { return now }
	for _, r := range []event.Record{
		{Type: event.TypeTurnStarted, Agent: "alpha", Time: t0.Add(10 * time.Second)},
		{Type: event.TypeTurnStarted, Agent: "beta", Time: t0.Add(10 * time.Second)},
		{Type: event.TypeTurnFailed, Agent: "beta", Err: "idle stream", Time: t0.Add(20 * time.Second)},
		{Type: event.TypeTurnStarted, Agent: "beta", Time: t0.Add(21 * time.Second)},
		{Type: event.TypeTextDelta, Agent: "beta", Text: "x", Time: t0.Add(90 * time.Second)},
	} {
		if err := w.Handle(ev(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.writeStatus(); err != nil {
		t.Fatal(err)
	}
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	a, b := st.Agents["alpha"], st.Agents["beta"]
	if a.Status != "stalled" || a.StalledSeconds != 90 || a.Failures != 0 {
		t.Errorf("alpha = %s %.0fs, %d failures; want stalled for 90s", a.Status, a.StalledSeconds, a.Failures)
	}
	if b.Status != "working" || b.Failures != 1 || b.LastError != "idle stream" {
		t.Errorf("beta = %s, %d failures (%q); want working, 1 failure", b.Status, b.Failures, b.LastError)
	}
}
