package runlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/diskfull"
	"github.com/massgen/massgen/internal/event"
)

// bigRun is threeAgentRun with answers, deltas and a final answer large
// enough that lines are cut part way when the disk fills.
func bigRun(final string) []event.Record {
	evs := threeAgentRun()
	for i, e := range evs {
		switch e.Type {
		case event.TypeAnswerAccepted, event.TypeTextDelta, event.TypeReasoningDelta:
			evs[i].Text = e.Text + " " + strings.Repeat("detail ", 1500)
		case event.TypeFinalAnswer:
			evs[i].Text = final
		}
	}
	return evs
}

// checkWholeLines fails unless every line of the JSONL file at path is
// whole (ReadJSONLines reads it to the end) and returns the lines.
func checkWholeLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	if err := ReadJSONLines(f, func(l []byte) error { lines = append(lines, bytes.Clone(l)); return nil }); err != nil {
		t.Errorf("%s: %v", filepath.Base(path), err)
	}
	return lines
}

// A run whose disk fills up part way still ends with logs a reader can
// use: every JSONL log ends at its last whole line (a prefix of the run,
// no hole), status.json says how the run ended and that the logs are
// incomplete, vote.json and the final answer are there (the space
// reserved at the start is given up for them), and nothing half-written
// is left behind. Close and Incomplete say what is missing.
func TestAFullDiskLeavesWholeLinesTheFinalStatusAndTheAnswer(t *testing.T) {
	root := diskfull.Mount(t, 1<<20)
	if root == "" {
		return // run in a user namespace, where the tmpfs could be mounted
	}
	w, err := New(root, t0, Metadata{Question: "What is 2+2?", Agents: team})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return t0.Add(time.Minute) }
	w.view.SetStallAfter(time.Hour)
	cfg := coord.Config{Agents: []string{"alpha", "beta", "gamma"}, Settings: coord.Settings{}.WithDefaults()}
	trace, err := w.Trace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := coord.New(cfg)
	log := w.LogWriter()
	final := "The answer is 4. " + strings.Repeat("Here is why. ", 800) // about 10 KiB
	evs := bigRun(final)

	var full bool
	for i, e := range evs {
		if i == 8 {
			// The disk fills (another program), with a page or two left:
			// the next large writes get part of their bytes down.
			diskfull.Fill(t, root, 6<<10)
			full = true
		}
		_ = w.Handle(ev(e)) // errors are expected; the run goes on
		trace(coord.Proposed{Agent: "alpha", Turn: coord.TurnID(i + 1), Action: coord.Action{Kind: coord.ActNewAnswer,
			Content: strings.Repeat("step ", 300)}}, m.Step(coord.Start{}))
		_, _ = log.Write([]byte("level=INFO msg=\"" + strings.Repeat("x", 3000) + "\"\n"))
	}
	if !full {
		t.Fatal("the disk never filled")
	}
	err = w.Close()
	var inc *IncompleteError
	if !errors.As(err, &inc) || !strings.Contains(inc.Note, "the disk was full") {
		t.Fatalf("Close = %v, want an IncompleteError saying the disk was full", err)
	}
	if w.Incomplete() != inc.Note {
		t.Errorf("Incomplete() = %q, want Close's note %q", w.Incomplete(), inc.Note)
	}
	t.Logf("note: %s", inc.Note)
	dir := w.Dir()

	// Every JSONL log is whole lines, a prefix of what the run wrote.
	lines := checkWholeLines(t, filepath.Join(dir, journalName))
	var want []event.Type
	for _, e := range evs {
		if !e.Type.Droppable() {
			want = append(want, e.Type)
		}
	}
	if len(lines) >= len(want) {
		t.Errorf("the journal has all %d events: the disk never stopped it", len(lines))
	}
	for i, l := range lines {
		var r event.Record
		if err := json.Unmarshal(l, &r); err != nil || r.Type != want[i] {
			t.Errorf("journal line %d = %s (%v), want a %s event: not a prefix of the run", i+1, l, err, want[i])
		}
	}
	checkWholeLines(t, filepath.Join(dir, ReplayName))
	if data, err := os.ReadFile(filepath.Join(dir, "massgen.log")); err != nil || (len(data) > 0 && data[len(data)-1] != '\n') {
		t.Errorf("massgen.log ends inside a line (%d bytes, %v)", len(data), err)
	}
	rl, err := os.Open(filepath.Join(dir, ReplayName))
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	if l, err := coord.ReadLog(rl); err != nil || l.Torn {
		t.Errorf("coord.ReadLog of the replay log: %v (torn %v)", err, l != nil && l.Torn)
	}

	// The final status, vote.json and the answer are there.
	var st StatusView
	readJSON(t, filepath.Join(dir, "status.json"), &st)
	if st.Meta.Status != "completed" || st.Results.Winner != "beta" || !strings.Contains(st.Meta.LogsIncomplete, "disk was full") {
		t.Errorf("status.json: status %q, winner %q, logs_incomplete %q; want completed, beta, the note", st.Meta.Status, st.Results.Winner, st.Meta.LogsIncomplete)
	}
	if Dead(st) {
		t.Error("the finished run looks dead")
	}
	var vs struct {
		Winner string `json:"winner"`
	}
	readJSON(t, filepath.Join(dir, "vote.json"), &vs)
	if vs.Winner != "beta" {
		t.Errorf("vote.json winner = %q", vs.Winner)
	}
	if got := read(t, filepath.Join(dir, "final", "beta", "answer.txt")); got != final {
		t.Errorf("final/beta/answer.txt has %d bytes, want the %d of the answer", len(got), len(final))
	}
	// Nothing half-written or left over.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(p, ".tmp") || d.Name() == reserveName) {
			t.Errorf("left behind: %s", p)
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			if fi, _ := d.Info(); fi.Size() == 0 && !strings.Contains(p, "agent_outputs") {
				t.Errorf("empty file: %s", p)
			}
		}
		return nil
	})
}

// Without the reserve (the disk was full before the run began), the final
// status is still written: over the status.json of the start, in place.
func TestAFullDiskWithoutReserveStillRecordsTheFinalStatus(t *testing.T) {
	root := diskfull.Mount(t, 256<<10)
	if root == "" {
		return
	}
	w, err := New(root, t0, Metadata{Question: "What is 2+2?", Agents: team})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return t0.Add(time.Minute) }
	w.view.SetStallAfter(time.Hour)
	w.reserve.release()
	w.reserve = nil
	diskfull.Fill(t, root, 0)
	for _, e := range threeAgentRun() {
		_ = w.Handle(ev(e))
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close = nil on a full disk")
	}
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	if st.Meta.Status != "completed" || st.Meta.LogsIncomplete == "" {
		t.Errorf("status.json says %q (logs_incomplete %q), want completed and the note", st.Meta.Status, st.Meta.LogsIncomplete)
	}
}

// A line the disk takes only part of is cut back: the file ends at the
// last whole line, and nothing is appended after it (a hole a reader
// could not see). Here the full disk is a writer that fails with ENOSPC
// after a number of bytes, so this runs wherever the tests do.
func TestALineTheDiskCutsIsTakenBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var failures []string
	l, err := openLines(path, "log.jsonl", func(name string, err error) { failures = append(failures, name+": "+err.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	space := &diskfull.Space{Limit: 100}
	l.out = diskfull.Writer{W: l.f, Space: space}
	lines := []string{`{"n":1,"text":"0123456789012345678901234567890"}`, `{"n":2,"text":"0123456789012345678901234567890"}`,
		`{"n":3,"text":"0123456789012345678901234567890"}`, `{"n":4}`}
	var errs []error
	for _, s := range lines {
		_, err := l.Write([]byte(s + "\n"))
		errs = append(errs, err)
	}
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], syscall.ENOSPC) || !errors.Is(errs[3], errStopped) {
		t.Errorf("write errors = %v; want nil, nil, ENOSPC, then stopped", errs)
	}
	data, _ := os.ReadFile(path)
	if want := lines[0] + "\n" + lines[1] + "\n"; string(data) != want {
		t.Errorf("file = %q, want the two whole lines %q", data, want)
	}
	if len(failures) != 1 || !strings.Contains(failures[0], "no space left") {
		t.Errorf("failures reported = %q, want one, ENOSPC", failures)
	}
}

// Readers of the JSONL logs take a torn last line (from an older massgen,
// or a kill mid-write) as the end of the log: every line before it is
// read, and they say the log ends early.
func TestReadersTolerateATornLastLine(t *testing.T) {
	whole := `{"a":1}` + "\n" + `{"a":2}` + "\n"
	var got []string
	err := ReadJSONLines(strings.NewReader(whole+`{"a":3,"b":"cut he`), func(l []byte) error { got = append(got, string(l)); return nil })
	if !errors.Is(err, ErrEndsEarly) || len(got) != 2 {
		t.Errorf("ReadJSONLines of a torn log = %d lines, %v; want 2 and ErrEndsEarly", len(got), err)
	}
	got = nil
	if err := ReadJSONLines(strings.NewReader(whole+`{"a":3}`), func(l []byte) error { got = append(got, string(l)); return nil }); err != nil || len(got) != 3 {
		t.Errorf("a whole last line without a newline: %d lines, %v; want 3", len(got), err)
	}
	if err := ReadJSONLines(strings.NewReader(`{"a":1`+"\n"+`{"a":2}`+"\n"), func(l []byte) error {
		var v map[string]int
		return json.Unmarshal(l, &v)
	}); err == nil || errors.Is(err, ErrEndsEarly) {
		t.Errorf("a bad line in the middle = %v, want an error that is not ErrEndsEarly", err)
	}

	// coord.ReadLog, for the replay log.
	var b bytes.Buffer
	cfg := coord.Config{Agents: []string{"a"}}
	lw, err := coord.NewLogWriter(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := lw.Append(coord.Record{In: coord.Start{}}); err != nil {
			t.Fatal(err)
		}
	}
	whole = b.String()
	l, err := coord.ReadLog(strings.NewReader(whole + `{"In":{"Kind":"sta`))
	if err != nil || !l.Torn || len(l.Steps) != 2 {
		t.Errorf("coord.ReadLog of a torn log = %v, torn %v; want 2 steps, torn", err, l != nil && l.Torn)
	}
	if l, err := coord.ReadLog(strings.NewReader(whole)); err != nil || l.Torn || len(l.Steps) != 2 {
		t.Errorf("coord.ReadLog of a whole log = %v; want 2 steps, not torn", err)
	}
}
