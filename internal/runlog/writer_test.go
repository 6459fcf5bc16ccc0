package runlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/event"
)

var t0 = time.Date(2025, 3, 4, 10, 20, 30, 123456000, time.UTC)

var team = []AgentInfo{
	{ID: "alpha", Backend: "openai", Model: "gpt-4o"},
	{ID: "beta", Backend: "claude", Model: "claude-sonnet"},
	{ID: "gamma", Backend: "sim", Model: "sim-model", Simulated: true},
}

// script is a small 3-agent run. Each event gets Seq and a Time one second
// apart, as a broker would stamp them.
type script struct {
	evs []event.Record
}

func (s *script) add(e event.Record) {
	e.Seq = uint64(len(s.evs) + 1)
	e.Time = t0.Add(time.Duration(len(s.evs)+1) * time.Second)
	s.evs = append(s.evs, e)
}

// threeAgentRun: alpha and beta answer, alpha is restarted by beta's
// answer, gamma is rejected, fails a turn and leaves; alpha votes for beta,
// beta answers again (invalidating that vote), then alpha and beta vote for
// beta, beta wins and presents.
func threeAgentRun() []event.Record {
	var s script
	s.add(event.Record{Type: event.TypeRunStarted, Text: "What is 2+2?", Agents: []string{"alpha", "beta", "gamma"}})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "alpha", Text: "prompt alpha 1"})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "beta", Text: "prompt beta 1"})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "gamma", Text: "prompt gamma 1"})
	s.add(event.Record{Type: event.TypeReasoningDelta, Agent: "alpha", Text: "thinking about it"})
	s.add(event.Record{Type: event.TypeTextDelta, Agent: "alpha", Text: "Answer "})
	s.add(event.Record{Type: event.TypeTextDelta, Agent: "alpha", Text: "A"})
	s.add(event.Record{Type: event.TypeActionRejected, Agent: "gamma", Reason: "vote before any answer exists", Text: "Please answer first."})
	s.add(event.Record{Type: event.TypeAnswerAccepted, Agent: "alpha", Text: "Answer A", Label: "agent1.1", AnonLabel: "agent1", Epoch: 1,
		Answers: []event.AnswerRef{{Label: "agent1", Agent: "alpha", Answer: "agent1.1"}}})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "alpha", Text: "prompt alpha 2", Labels: []string{"agent1"}, Epoch: 1})
	s.add(event.Record{Type: event.TypeAnswerAccepted, Agent: "beta", Text: "Answer B", Label: "agent2.1", AnonLabel: "agent2", Epoch: 2,
		Answers: []event.AnswerRef{{Label: "agent1", Agent: "alpha", Answer: "agent1.1"}, {Label: "agent2", Agent: "beta", Answer: "agent2.1"}}})
	s.add(event.Record{Type: event.TypeTurnRestarted, Agent: "alpha", Target: "beta", Epoch: 2})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "alpha", Text: "prompt alpha 3", Labels: []string{"agent1", "agent2"}, Epoch: 2})
	s.add(event.Record{Type: event.TypeTurnFailed, Agent: "gamma", Err: "HTTP 500: internal error", Epoch: 2})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "gamma", Text: "prompt gamma 2", Labels: []string{"agent1", "agent2"}, Epoch: 2})
	s.add(event.Record{Type: event.TypeVoteAccepted, Agent: "alpha", Target: "beta", TargetLabel: "agent2", TargetAnswer: "agent2.1", Reason: "B is better", Epoch: 2})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "beta", Text: "prompt beta 2", Labels: []string{"agent1", "agent2"}, Epoch: 2})
	s.add(event.Record{Type: event.TypeAnswerAccepted, Agent: "beta", Text: "Answer B2", Label: "agent2.2", AnonLabel: "agent2", Epoch: 3,
		Answers: []event.AnswerRef{{Label: "agent1", Agent: "alpha", Answer: "agent1.1"}, {Label: "agent2", Agent: "beta", Answer: "agent2.2"}}})
	s.add(event.Record{Type: event.TypeAgentFailed, Agent: "gamma", Err: "3 failures in a row: HTTP 500", Epoch: 3})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "alpha", Text: "prompt alpha 4", Labels: []string{"agent1", "agent2"}, Epoch: 3})
	s.add(event.Record{Type: event.TypeVoteAccepted, Agent: "alpha", Target: "beta", TargetLabel: "agent2", TargetAnswer: "agent2.2", Reason: "B2 is complete", Epoch: 3})
	s.add(event.Record{Type: event.TypeTurnStarted, Agent: "beta", Text: "prompt beta 3", Labels: []string{"agent1", "agent2"}, Epoch: 3})
	s.add(event.Record{Type: event.TypeVoteAccepted, Agent: "beta", Target: "beta", TargetLabel: "agent2", TargetAnswer: "agent2.2", Reason: "mine is best", Epoch: 3})
	s.add(event.Record{Type: event.TypeWinnerSelected, Agent: "beta", Votes: map[string]int{"beta": 2}, Reason: "most votes (2 of 2)", Label: "agent2.2", Epoch: 3})
	s.add(event.Record{Type: event.TypeFinalStarted, Agent: "beta", Status: "presentation", Text: "present prompt", Epoch: 3})
	// Usage arrives as turns end: alpha's three turns, beta's answers.
	s.add(event.Record{Type: event.TypeTurnEnded, Agent: "alpha", InputTokens: 110, OutputTokens: 25, Epoch: 3})
	s.add(event.Record{Type: event.TypeTurnEnded, Agent: "beta", InputTokens: 50, OutputTokens: 10, Epoch: 3})
	s.add(event.Record{Type: event.TypeFinalDelta, Agent: "beta", Text: "The answer "})
	s.add(event.Record{Type: event.TypeFinalDelta, Agent: "beta", Text: "is 4."})
	s.add(event.Record{Type: event.TypeFinalAnswer, Agent: "beta", Text: "The answer is 4.", Reason: "presentation", Epoch: 3})
	s.add(event.Record{Type: event.TypeRunFinished, Status: "completed", Epoch: 3})
	return s.evs
}

func newTestWriter(t *testing.T, meta Metadata) *Writer {
	t.Helper()
	if meta.Agents == nil {
		meta.Agents = team
	}
	w, err := New(filepath.Join(t.TempDir(), ".massgen", "massgen_logs"), t0, meta)
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return t0.Add(time.Minute) }
	w.view.SetStallAfter(time.Hour) // the fixed clock is not a stall
	t.Cleanup(func() { w.Close() })
	return w
}

// ev is the typed event of a record (the tests write events in their
// flat form, as the log files hold them).
func ev(r event.Record) event.Event {
	e, err := event.FromRecord(r)
	if err != nil {
		panic(err)
	}
	return e
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(read(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// steps lists an agent's step dirs in order with the files each holds.
func steps(t *testing.T, dir string) [][]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, e := range ents {
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		row := []string{e.Name()}
		for _, f := range files {
			row = append(row, f.Name())
		}
		out = append(out, row)
	}
	return out
}

func TestScriptedRun(t *testing.T) {
	w := newTestWriter(t, Metadata{Question: "What is 2+2?"})
	fmtLog := "level=INFO msg=hello\n"
	if _, err := w.LogWriter().Write([]byte(fmtLog)); err != nil {
		t.Fatal(err)
	}
	evs := threeAgentRun()
	for _, e := range evs {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatalf("Handle(%s): %v", e.Type, err)
		}
		checkMidRun(t, w, e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Handle(ev(event.Record{Type: event.TypeToolCalled})); err != ErrClosed {
		t.Errorf("Handle after Close = %v, want ErrClosed", err)
	}
	d := w.Dir()

	// Step dirs: one per answer and vote, context.txt from the latest turn.
	alpha := steps(t, filepath.Join(d, "agent_alpha"))
	want := [][]string{
		{"20250304_102039_123456", "answer.txt", "context.txt"},
		{"20250304_102046_123456", "context.txt", "vote.json"},
		{"20250304_102051_123456", "context.txt", "vote.json"},
	}
	if diff := cmp.Diff(want, alpha); diff != "" {
		t.Errorf("agent_alpha steps (-want +got):\n%s", diff)
	}
	ad := filepath.Join(d, "agent_alpha")
	if got := read(t, filepath.Join(ad, alpha[0][0], "answer.txt")); got != "Answer A" {
		t.Errorf("alpha answer = %q", got)
	}
	if got := read(t, filepath.Join(ad, alpha[0][0], "context.txt")); got != "prompt alpha 1" {
		t.Errorf("alpha answer context = %q", got)
	}
	if got := read(t, filepath.Join(ad, alpha[1][0], "context.txt")); got != "prompt alpha 3" {
		t.Errorf("alpha first vote context = %q", got)
	}
	var sv stepVote
	readJSON(t, filepath.Join(ad, alpha[2][0], "vote.json"), &sv)
	wantVote := stepVote{VoterID: "alpha", VotedFor: "beta", VotedForLabel: "agent2", VotedForAnswer: "agent2.2", Reason: "B2 is complete",
		Timestamp: "2025-03-04T10:20:51.123456Z", Epoch: 3, AvailableLabels: []string{"agent1", "agent2"}}
	if diff := cmp.Diff(wantVote, sv); diff != "" {
		t.Errorf("alpha vote.json (-want +got):\n%s", diff)
	}
	beta := steps(t, filepath.Join(d, "agent_beta"))
	if len(beta) != 3 {
		t.Fatalf("beta steps = %v", beta)
	}
	bd := filepath.Join(d, "agent_beta")
	if got := read(t, filepath.Join(bd, beta[0][0], "answer.txt")); got != "Answer B" {
		t.Errorf("beta answer 1 = %q", got)
	}
	if got := read(t, filepath.Join(bd, beta[1][0], "answer.txt")); got != "Answer B2" {
		t.Errorf("beta answer 2 = %q", got)
	}
	if got := read(t, filepath.Join(bd, beta[1][0], "context.txt")); got != "prompt beta 2" {
		t.Errorf("beta answer 2 context = %q", got)
	}
	if _, err := os.Stat(filepath.Join(d, "agent_gamma")); !os.IsNotExist(err) {
		t.Errorf("gamma never answered or voted, yet agent_gamma exists (%v)", err)
	}

	// Final answer.
	if got := read(t, filepath.Join(d, "final", "beta", "answer.txt")); got != "The answer is 4." {
		t.Errorf("final answer = %q", got)
	}
	if got := read(t, filepath.Join(d, "final", "beta", "context.txt")); got != "present prompt" {
		t.Errorf("final context = %q", got)
	}
	if got, want := w.AnswerFile(), filepath.Join(d, "final", "beta", "answer.txt"); got != want {
		t.Errorf("AnswerFile = %q, want %q", got, want)
	}

	// Streams.
	out := read(t, filepath.Join(d, "agent_outputs", "alpha.txt"))
	// The model streamed text in turn 1 only; its workflow actions are
	// tool calls, written as lines of their own.
	wantOut := "--- turn 1 (epoch 0) ---\n[reasoning]\nthinking about it\n[/reasoning]\nAnswer A\n" +
		"→ new_answer accepted as agent1.1 (shown as agent1):\nAnswer A\n\n" +
		"--- turn 2 (epoch 1) ---\n\n--- restarted (new answer by beta) ---\n\n--- turn 3 (epoch 2) ---\n" +
		"→ vote for agent2 (beta's agent2.1): B is better\n\n" +
		"--- turn 4 (epoch 3) ---\n→ vote for agent2 (beta's agent2.2): B2 is complete\n"
	if out != wantOut {
		t.Errorf("alpha.txt:\n%s\nwant:\n%s", out, wantOut)
	}
	if got := read(t, filepath.Join(d, "agent_outputs", "final_presentation.txt")); got != "The answer is 4." {
		t.Errorf("final_presentation.txt = %q", got)
	}
	if got := read(t, filepath.Join(d, "agent_outputs", "beta.txt")); !strings.Contains(got, "--- final presentation (epoch 3): streamed to final_presentation.txt ---") {
		t.Errorf("beta.txt lacks the presentation separator:\n%s", got)
	}

	// vote.json: only the final epoch counts; alpha's vote in epoch 2 is gone.
	var vs voteSummary
	readJSON(t, filepath.Join(d, "vote.json"), &vs)
	wantVS := voteSummary{
		Winner: "beta",
		Reason: "most votes (2 of 2)",
		Tally:  map[string]int{"alpha": 0, "beta": 2},
		Votes: []voteEntry{
			{Voter: "alpha", VotedFor: "beta", VotedForLabel: "agent2", VotedForAnswer: "agent2.2", Reason: "B2 is complete", Epoch: 3},
			{Voter: "beta", VotedFor: "beta", VotedForLabel: "agent2", VotedForAnswer: "agent2.2", Reason: "mine is best", Epoch: 3},
		},
		Labels:       map[string]string{"agent1": "alpha", "agent2": "beta"},
		AnswerLabels: map[string]string{"agent1": "agent1.1", "agent2": "agent2.2"},
		// Tokens summed over the turns that ended.
		Usage: usageSummary{InputTokens: 160, OutputTokens: 35, PerAgent: map[string]float64{"alpha": 0, "beta": 0, "gamma": 0},
			ToolsPerAgent: map[string]toolUse{"alpha": {}, "beta": {}, "gamma": {}}},
	}
	if diff := cmp.Diff(wantVS, vs); diff != "" {
		t.Errorf("vote.json (-want +got):\n%s", diff)
	}

	// coordination_events.json: valid JSON, non-droppable events in order.
	var ef struct {
		SessionMetadata sessionMetadata `json:"session_metadata"`
		Events          []event.Record  `json:"events"`
	}
	readJSON(t, filepath.Join(d, "coordination_events.json"), &ef)
	var wantEvs []event.Record
	for _, e := range evs {
		if !e.Type.Droppable() {
			wantEvs = append(wantEvs, event.ToRecord(ev(e)))
		}
	}
	if diff := cmp.Diff(wantEvs, ef.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	sm := ef.SessionMetadata
	if sm.Question != "What is 2+2?" || sm.FinalWinner != "beta" || sm.Status != "completed" || sm.DeltaEvents != 5 ||
		!slices.Equal(sm.AgentIDs, []string{"alpha", "beta", "gamma"}) || sm.EndTime == nil || !sm.EndTime.Equal(evs[len(evs)-1].Time) {
		t.Errorf("session_metadata = %+v", sm)
	}

	// Final status.
	var st StatusView
	readJSON(t, filepath.Join(d, "status.json"), &st)
	if diff := cmp.Diff(w.Status(), st); diff != "" {
		t.Errorf("status.json differs from Status() (-view +file):\n%s", diff)
	}
	if st.Meta.Status != "completed" || st.Coordination.Phase != "done" || st.Results.Winner != "beta" ||
		st.Results.FinalAnswerPreview != "The answer is 4." || st.Meta.ElapsedSeconds != 31 {
		t.Errorf("final status = %+v", st)
	}
	if diff := cmp.Diff(map[string]int{"beta": 2}, st.Results.Votes); diff != "" {
		t.Errorf("results.votes (-want +got):\n%s", diff)
	}
	if a, g := st.Agents["alpha"], st.Agents["gamma"]; a.Status != "done" || g.Status != "failed" || a.InputTokens != 110 || a.OutputTokens != 25 || a.Restarts != 1 {
		t.Errorf("agents = %+v", st.Agents)
	}

	// Table.
	table := read(t, filepath.Join(d, "coordination_table.txt"))
	for _, s := range []string{"Epoch 0 (before any answer)", "Epoch 1", "Epoch 2", "Epoch 3", "Final presentation",
		"Votes (epoch 3): alpha 0, beta 2", "Winner: beta (agent2.2) — most votes (2 of 2)",
		"Final answer: by beta (presentation), 16 chars", "Status: completed (duration 31s)"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
	cols := tableColumns(table, 3)
	for i, want := range [][]string{
		{"alpha (openai/gpt-4o)", "answered agent1.1", "restarted (new answer by beta)", "voted agent2.1 (beta) as agent2 — B is better", "voted agent2.2 (beta) as agent2 — B2 is complete"},
		{"beta (claude/claude-sonnet)", "answered agent2.1", "answered agent2.2", "voted agent2.2 (beta) as agent2 — mine is best", "presenting", "final answer (16 chars)"},
		{"gamma (sim/sim-model) [sim]", "rejected: vote before any answer exists", "turn failed: HTTP 500: internal error", "failed: 3 failures in a row: HTTP 500"},
	} {
		for _, s := range want {
			if !strings.Contains(cols[i], s) {
				t.Errorf("column %d lacks %q: %q", i, s, cols[i])
			}
		}
	}
	for i, l := range strings.Split(table, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("table line %d is %d wide: %q", i+1, n, l)
		}
	}

	if got := read(t, filepath.Join(d, "massgen.log")); got != fmtLog {
		t.Errorf("massgen.log = %q", got)
	}
}

// checkMidRun asserts status.json after selected steps of the script.
func checkMidRun(t *testing.T, w *Writer, e event.Record) {
	t.Helper()
	if e.Type.Droppable() {
		return // deltas do not rewrite status.json (only the ticker catches them up)
	}
	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	if diff := cmp.Diff(w.Status(), st); diff != "" {
		t.Fatalf("after %d %s: status.json differs from Status() (-view +file):\n%s", e.Seq, e.Type, diff)
	}
	type agentBrief struct {
		Status string
		Vote   *VoteView
	}
	brief := func() map[string]agentBrief {
		m := map[string]agentBrief{}
		for id, a := range st.Agents {
			m[id] = agentBrief{a.Status, a.Vote}
		}
		return m
	}
	switch e.Seq {
	case 8: // gamma rejected
		if g := st.Agents["gamma"]; g.Rejections != 1 || g.Status != "working" {
			t.Errorf("after rejection gamma = %+v", g)
		}
	case 16: // alpha voted in epoch 2
		want := map[string]agentBrief{
			"alpha": {"voted", &VoteView{VotedFor: "beta", VotedForLabel: "agent2", VotedForAnswer: "agent2.1", ReasonPreview: "B is better"}},
			"beta":  {"answered", nil},
			"gamma": {"working", nil},
		}
		if diff := cmp.Diff(want, brief()); diff != "" {
			t.Errorf("after first vote (-want +got):\n%s", diff)
		}
		if c := st.Coordination; c.Epoch != 2 || c.VotesInEpoch != 1 || c.AnswersTotal != 2 || c.LiveAgents != 3 {
			t.Errorf("coordination = %+v", c)
		}
		if diff := cmp.Diff(map[string]int{"alpha": 0, "beta": 1}, st.Results.Votes); diff != "" {
			t.Errorf("results.votes (-want +got):\n%s", diff)
		}
	case 18: // beta's second answer invalidates alpha's vote
		want := map[string]agentBrief{
			"alpha": {"idle", nil},
			"beta":  {"answered", nil},
			"gamma": {"working", nil},
		}
		if diff := cmp.Diff(want, brief()); diff != "" {
			t.Errorf("after new answer (-want +got):\n%s", diff)
		}
		if c := st.Coordination; c.Epoch != 3 || c.VotesInEpoch != 0 || c.AnswersTotal != 3 {
			t.Errorf("coordination = %+v", c)
		}
		if b := st.Agents["beta"]; b.AnswerCount != 2 || b.LatestAnswerLabel != "agent2.2" {
			t.Errorf("beta = %+v", b)
		}
	case 19: // gamma leaves
		g := st.Agents["gamma"]
		if g.Status != "failed" || g.Failures != 1 || g.LastError != "3 failures in a row: HTTP 500" || st.Coordination.LiveAgents != 2 {
			t.Errorf("gamma = %+v, live = %d", g, st.Coordination.LiveAgents)
		}
	case 25: // presenting
		if st.Coordination.Phase != "presenting" || st.Agents["beta"].Status != "presenting" || st.Results.Winner != "beta" {
			t.Errorf("presenting status = %+v", st)
		}
	}
}

// tableColumns joins the wrapped lines of each table column back into one
// string, so assertions do not depend on where cells wrap.
func tableColumns(table string, n int) []string {
	cols := make([]string, n)
	for _, l := range strings.Split(table, "\n") {
		parts := strings.Split(l, "|")
		if !strings.HasPrefix(l, "|") || len(parts) != n+2 {
			continue
		}
		for i, p := range parts[1 : n+1] {
			if p = strings.TrimSpace(p); p != "" {
				cols[i] += p + " "
			}
		}
	}
	return cols
}

// After RunFinished has written the summaries, Close leaves them alone
// unless something changed since; no temporary file is left behind.
func TestCloseRewritesSummariesOnlyWhenSomethingChanged(t *testing.T) {
	stat := func(t *testing.T, path string) os.FileInfo {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	for _, tc := range []struct {
		name    string
		dropped uint64
		rewrite bool
	}{{"nothing changed", 0, false}, {"deltas were dropped", 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTestWriter(t, Metadata{})
			for _, e := range threeAgentRun() {
				if err := w.Handle(ev(e)); err != nil {
					t.Fatal(err)
				}
			}
			events := filepath.Join(w.Dir(), "coordination_events.json")
			before := stat(t, events)
			w.mu.Lock()
			w.dropped = tc.dropped // as Run records it once the subscription ends
			w.mu.Unlock()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if rewritten := !os.SameFile(before, stat(t, events)); rewritten != tc.rewrite {
				t.Errorf("coordination_events.json rewritten: %v, want %v", rewritten, tc.rewrite)
			}
			if tc.dropped > 0 && !strings.Contains(read(t, events), `"dropped_deltas": 3`) {
				t.Error("the dropped deltas are not recorded")
			}
			tmps, _ := filepath.Glob(filepath.Join(w.Dir(), ".*.tmp"))
			if len(tmps) != 0 {
				t.Errorf("temporary files left: %v", tmps)
			}
		})
	}
}

// toolRun is threeAgentRun where beta calls tools: add (ok, 12.3ms)
// while gamma is rejected, lookup (an error, 42µs) in epoch 1, and its
// turns report two tool rounds. Events are stamped afresh, one second apart.
func toolRun() []event.Record {
	var s script
	for _, e := range threeAgentRun() {
		switch {
		case e.Type == event.TypeTurnEnded && e.Agent == "beta":
			e.ToolRounds = 2
		case e.Type == event.TypeTurnStarted && e.Agent == "alpha" && e.Epoch == 1:
			s.add(event.Record{Type: event.TypeToolCalled, Agent: "beta", Text: "lookup", Args: `{"country":"Mars"}`,
				Result: `no capital known for "Mars"`, IsError: true, DurationMS: 0.042, Epoch: 1})
		}
		s.add(e)
		if e.Type == event.TypeActionRejected {
			s.add(event.Record{Type: event.TypeToolCalled, Agent: "beta", Text: "add", Args: `{"a":2,"b":2}`, Result: "4", DurationMS: 12.3})
		}
	}
	return s.evs
}

// Tool calls are in the table (golden), agent_outputs, status.json,
// vote.json and the events, each with what it says of them.
func TestToolCallsInEveryLogFile(t *testing.T) {
	w := newTestWriter(t, Metadata{Question: "What is 2+2?"})
	for _, e := range toolRun() {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := w.Dir()
	var st StatusView
	readJSON(t, filepath.Join(d, "status.json"), &st)
	for id, want := range map[string][3]int{"alpha": {0, 0, 0}, "beta": {2, 1, 2}, "gamma": {0, 0, 0}} {
		a := st.Agents[id]
		if got := [3]int{a.ToolCalls, a.ToolErrors, a.ToolRounds}; got != want {
			t.Errorf("status.json %s: tool_calls, tool_errors, tool_rounds = %v, want %v", id, got, want)
		}
	}
	var vs voteSummary
	readJSON(t, filepath.Join(d, "vote.json"), &vs)
	wantTools := map[string]toolUse{"alpha": {}, "beta": {Calls: 2, Errors: 1, Rounds: 2}, "gamma": {}}
	if diff := cmp.Diff(wantTools, vs.Usage.ToolsPerAgent); diff != "" {
		t.Errorf("vote.json usage.tools_per_agent (-want +got):\n%s", diff)
	}
	out := read(t, filepath.Join(d, "agent_outputs", "beta.txt"))
	for _, want := range []string{`beta called add({"a":2,"b":2}) → 4 [12ms]`, `beta called lookup({"country":"Mars"}) → error no capital known for "Mars" [42µs]`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("beta.txt lacks the line %q:\n%s", want, out)
		}
	}
	table := read(t, filepath.Join(d, "coordination_table.txt"))
	for _, want := range []string{"| tool add ok 12ms ", "| tool lookup error 42µs "} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	var ef struct {
		Events []event.Record `json:"events"`
	}
	readJSON(t, filepath.Join(d, "coordination_events.json"), &ef)
	var tools []event.Record
	for _, r := range ef.Events {
		if r.Type == event.TypeToolCalled {
			tools = append(tools, r)
		}
	}
	if len(tools) != 2 || tools[0].DurationMS != 12.3 || tools[1].DurationMS != 0.042 || !tools[1].IsError || tools[1].Result == "" {
		t.Errorf("tool_called events = %+v", tools)
	}
}

// A session's turns log in turn_<N>/ of the session's directory, with the
// usual files.
func TestNewTurnLogsInsideTheSessionDirectory(t *testing.T) {
	root := t.TempDir()
	session, err := NewDir(root, time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(session) != root || filepath.Base(session) != "log_20261203_020000_000000" {
		t.Errorf("session dir %s", session)
	}
	for n := 1; n <= 2; n++ {
		w, err := NewTurn(session, n, time.Time{}, Metadata{Question: "q"})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(session, fmt.Sprintf("turn_%d", n)); w.Dir() != want {
			t.Errorf("turn %d logs in %s, want %s", n, w.Dir(), want)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"status.json", "execution_metadata.yaml", "massgen.log"} {
			if _, err := os.Stat(filepath.Join(w.Dir(), f)); err != nil {
				t.Errorf("turn %d: %v", n, err)
			}
		}
	}
}
