package cli

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
)

// massgen replay LOG_DIR re-decides a finished run from its replay log
// alone, without any agent: the winner and tally it prints are the run's
// (vote.json), and every step is shown as a transcript.
func TestReplayReproducesARunFromItsLogAlone(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--config", "@examples/sim_three_agents", "What is the capital of France?")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	dir := r.logDir(t)
	var votes struct {
		Winner string         `json:"winner"`
		Tally  map[string]int `json:"tally"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "vote.json")); err != nil || json.Unmarshal(b, &votes) != nil || votes.Winner == "" {
		t.Fatalf("vote.json: %s (%v)", b, err)
	}
	maps.DeleteFunc(votes.Tally, func(_ string, n int) bool { return n == 0 })
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"replay", dir}, Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, WorkDir: r.dir})
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out.String(), errb.String())
	}
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	summary := lines[len(lines)-1]
	if !strings.HasPrefix(summary, "reproduced: ") || !strings.Contains(summary, "completed, winner "+votes.Winner+" ") ||
		!strings.HasSuffix(summary, event.Tally(votes.Tally)) {
		t.Errorf("summary %q, want the run reproduced with winner %s and tally %v", summary, votes.Winner, votes.Tally)
	}
	for _, want := range []string{"> start", "> answer ", "> vote ", "  verdict accepted", "  present winner=" + votes.Winner, "> presented "} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript has no %q:\n%s", want, text)
		}
	}
}

// A replay log whose recorded decisions no longer follow from its inputs
// is caught: exit 2, naming the first step that differs.
func TestReplayOfAnEditedLogDiverges(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--config", "@examples/sim_three_agents", "q")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	path := filepath.Join(r.logDir(t), runlog.ReplayName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A vote recorded as accepted becomes a rejection in the record.
	edited := strings.Replace(string(b), `"Outcome":"accepted","Message":"","Label":"agent1","Target":"researcher"`,
		`"Outcome":"rejected","Message":"","Label":"agent1","Target":"researcher"`, 1)
	if edited == string(b) {
		t.Fatalf("no accepted vote to edit in %s", b)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"replay", "--quiet", path}, Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, WorkDir: r.dir})
	if code != ExitExecution || !strings.Contains(out.String(), "replay diverges at step") || !strings.Contains(errb.String(), "diverges") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit %d and the diverging step", code, out.String(), errb.String(), ExitExecution)
	}
}

// The runs the orchestrator recorded (internal/coord/testdata/runs)
// replay through the command too.
func TestReplayOfRecordedRuns(t *testing.T) {
	logs, _ := filepath.Glob("../coord/testdata/runs/*.jsonl")
	if len(logs) == 0 {
		t.Fatal("no recorded runs")
	}
	for _, path := range logs {
		abs, _ := filepath.Abs(path)
		var out, errb bytes.Buffer
		code := Run(t.Context(), []string{"replay", "-q", abs}, Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, WorkDir: t.TempDir()})
		if code != 0 || !strings.HasPrefix(out.String(), "reproduced: ") || !strings.Contains(out.String(), "winner ") {
			t.Errorf("%s: exit %d, %q %q", path, code, out.String(), errb.String())
		}
	}
}

// The decision events are a pure function of the replay log: derived from
// the log alone (massgen replay --events), they are the ones the run
// logged in coordination_events.jsonl — same types, agents, answers,
// labels, votes, winner and final answer, in the same order.
func TestEventsDerivedFromTheLogAreTheOnesTheRunPublished(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "@examples/sim_three_agents", "What is the capital of France?"},
		{"--config", "@examples/sim_single_agent", "q"},
	} {
		r := massgen(t, t.Context(), nil, nil, args...)
		if r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
		dir := r.logDir(t)
		f, err := os.Open(filepath.Join(dir, runlog.ReplayName))
		if err != nil {
			t.Fatal(err)
		}
		l, err := coord.ReadLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var derived []event.Record
		for _, e := range orchestrator.DeriveLog(l) {
			derived = append(derived, event.ToRecord(e))
		}
		var logged []event.Record
		ef, err := os.Open(filepath.Join(dir, "coordination_events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		err = runlog.ReadJSONLines(ef, func(line []byte) error {
			var rec event.Record
			err := json.Unmarshal(line, &rec)
			logged = append(logged, rec)
			return err
		})
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[event.Type]bool{}
		for _, d := range derived {
			kinds[d.Type] = true
		}
		var decisions []event.Record
		for _, rec := range logged {
			if kinds[rec.Type] || rec.Type == event.TypeTurnFailed || rec.Type == event.TypeAgentFailed {
				decisions = append(decisions, rec)
			}
		}
		if len(derived) < 2 || len(derived) != len(decisions) {
			t.Fatalf("%v: %d derived events, %d logged decision events", args, len(derived), len(decisions))
		}
		for i, d := range derived {
			g := decisions[i]
			g.Seq, g.Time, g.InputTokens, g.OutputTokens, g.CostUSD = 0, time.Time{}, 0, 0, 0
			d.Seq, d.Time = 0, time.Time{}
			if diff := cmp.Diff(g, d, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%v: event %d (%s) differs (-logged +derived):\n%s", args, i, d.Type, diff)
			}
		}
	}
}
