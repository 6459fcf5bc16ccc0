package event

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// play publishes events through a broker with a fixed clock and returns it.
func play(t0 time.Time, events ...Event) *Broker {
	b := NewBroker()
	clock := t0
	b.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	for _, e := range events {
		b.Publish(e)
	}
	return b
}

func TestViewFollowsACoordination(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c1 := AnswerRef{Label: "agent1", Agent: "c", Answer: "agent3.1"}
	a1 := AnswerRef{Label: "agent1", Agent: "a", Answer: "agent1.1"}
	c1b := AnswerRef{Label: "agent2", Agent: "c", Answer: "agent3.1"}
	b := play(t0,
		RunStarted{Question: "q", Team: []AgentInfo{{ID: "a", Backend: "sim", Model: "m"}, {ID: "b"}, {ID: "c"}}},
		TurnStarted{Agent: "a"}, TurnStarted{Agent: "b"}, TurnStarted{Agent: "c"},
		AnswerAccepted{Agent: "c", Content: "C", Label: "agent3.1", AnonLabel: "agent1", Answers: []AnswerRef{c1}},
		VoteAccepted{Agent: "b", Target: "c", TargetLabel: "agent1", TargetAnswer: "agent3.1"},
		AnswerAccepted{Agent: "a", Content: "A", Label: "agent1.1", AnonLabel: "agent1", Answers: []AnswerRef{a1, c1b}},
		TurnFailed{Agent: "b", Err: "503"},
		Timeout{Agent: "b", Err: "deadline"},
		TurnEnded{Agent: "a", Usage: Usage{InputTokens: 3, OutputTokens: 2, CostUSD: 1}},
		TurnStarted{Agent: "b"},
		VoteAccepted{Agent: "b", Target: "c", TargetLabel: "agent2", TargetAnswer: "agent3.1"},
	)
	s := b.View().Snapshot(t0.Add(13 * time.Second))
	if s.Epoch != 2 || s.Question != "q" || s.Status != RunRunning || s.Attempt != 1 {
		t.Errorf("epoch %d question %q status %s attempt %d", s.Epoch, s.Question, s.Status, s.Attempt)
	}
	if diff := cmp.Diff(map[string]int{"a": 0, "c": 1}, s.Tally); diff != "" {
		t.Errorf("tally counts only the current epoch's votes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"agent1": "a", "agent2": "c"}, s.Labels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	bv, _ := s.Agent("b")
	if bv.Failures != 2 || bv.Status != StatusVoted || bv.Vote == nil || bv.Vote.TargetAnswer != "agent3.1" {
		t.Errorf("b = %+v; want 2 failures (failed turn and turn timeout), voted for agent3.1", bv)
	}
	av, _ := s.Agent("a")
	if av.Backend != "sim" || av.Answers != 1 || av.LatestAnswer != "agent1.1" || av.Usage.CostUSD != 1 || s.Usage.InputTokens != 3 {
		t.Errorf("a = %+v, run usage %+v", av, s.Usage)
	}
	if got := []string{s.Answers[0].Label, s.Answers[1].Label}; !cmp.Equal(got, []string{"agent3.1", "agent1.1"}) {
		t.Errorf("answers %v", got)
	}
	// The snapshot is a copy: changing it changes nothing in the view.
	s.Agents[0].Status, s.Tally["a"] = "x", 9
	if s2 := b.View().Snapshot(t0); s2.Agents[0].Status == "x" || s2.Tally["a"] == 9 {
		t.Error("a snapshot shares memory with the view")
	}
}

func TestViewShowsAQuietTurnAsStalled(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := play(t0, RunStarted{Team: []AgentInfo{{ID: "a"}, {ID: "b"}}},
		TurnStarted{Agent: "a"}, TurnStarted{Agent: "b"}, TextDelta{Agent: "b", Text: "x"}) // a at t0+2s, b at t0+4s
	v := b.View()
	v.SetStallAfter(10 * time.Second)
	s := v.Snapshot(t0.Add(13 * time.Second))
	a, _ := s.Agent("a")
	bb, _ := s.Agent("b")
	if a.Status != StatusStalled || a.StalledSeconds != 11 {
		t.Errorf("a = %s %.0fs, want stalled 11s", a.Status, a.StalledSeconds)
	}
	if bb.Status != StatusWorking {
		t.Errorf("b = %s, want working (heard from 9s ago)", bb.Status)
	}
	// A failed turn is not in flight: it does not stall.
	b.Publish(TurnFailed{Agent: "a", Err: "idle stream"})
	if a, _ := func() (AgentView, bool) { s := v.Snapshot(t0.Add(time.Hour)); return s.Agent("a") }(); a.Status != StatusIdle || a.Failures != 1 {
		t.Errorf("after its turn failed a = %s, %d failures", a.Status, a.Failures)
	}
}

// With the agents' bytes (SetSilence), a request in flight decides: its
// silence stalls an agent whose events are recent, and bytes that flow
// without events (a long answer streamed as tool-call arguments) keep an
// agent with old events working. With no request in flight, events decide.
func TestViewStallsByTheBytesOfTheRequestInFlight(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := play(t0, RunStarted{Team: []AgentInfo{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}},
		TurnStarted{Agent: "a"}, TurnStarted{Agent: "b"}, TurnStarted{Agent: "c"}, FinalStarted{Agent: "d"}) // at t0+2..5s
	v := b.View()
	v.SetStallAfter(10 * time.Second)
	silent := map[string]time.Duration{
		"a": 12 * time.Second, // hung: no byte for 12s
		"b": time.Second,      // streaming tool-call arguments: no event, but bytes
		// c: no request in flight (running a tool): its events decide
		"d": 30 * time.Second, // a presentation that hangs
	}
	v.SetSilence(func(id string) (time.Duration, bool) { d, ok := silent[id]; return d, ok })
	s := v.Snapshot(t0.Add(20 * time.Second))
	want := map[string]struct {
		status        string
		stalled       float64
		sinceLastByte time.Duration
	}{
		"a": {StatusStalled, 12, 12 * time.Second},
		"b": {StatusWorking, 0, 0},
		"c": {StatusStalled, 16, 0},
		"d": {StatusStalled, 30, 30 * time.Second},
	}
	for id, w := range want {
		ag, _ := s.Agent(id)
		if ag.Status != w.status || ag.StalledSeconds != w.stalled || ag.SinceLastByte != w.sinceLastByte {
			t.Errorf("%s = %s, stalled %.0fs, %s since its last byte; want %s, %.0fs, %s", id, ag.Status, ag.StalledSeconds, ag.SinceLastByte, w.status, w.stalled, w.sinceLastByte)
		}
	}
	// Not in a turn: silence means nothing.
	b.Publish(TurnFailed{Agent: "a", Err: "idle stream"})
	if a, _ := func() (AgentView, bool) { s := v.Snapshot(t0.Add(time.Hour)); return s.Agent("a") }(); a.Status != StatusIdle || a.SinceLastByte != 0 {
		t.Errorf("after its turn failed a = %s, %s since its last byte", a.Status, a.SinceLastByte)
	}
}

// The stall threshold follows the idle-stream timeout: half of it, so a
// hung provider shows before its turn fails, at most DefaultStallAfter.
func TestStallAfterFollowsTheIdleTimeout(t *testing.T) {
	for idle, want := range map[time.Duration]time.Duration{
		0:                DefaultStallAfter, // no idle timeout
		-time.Second:     DefaultStallAfter,
		8 * time.Second:  4 * time.Second,
		60 * time.Second: 30 * time.Second,
		10 * time.Minute: DefaultStallAfter,
	} {
		if got := StallAfterFor(idle); got != want {
			t.Errorf("StallAfterFor(%s) = %s, want %s", idle, got, want)
		}
	}
}

func TestViewAppliesAnEventOnce(t *testing.T) {
	b := play(time.Now(), RunStarted{Team: []AgentInfo{{ID: "a"}}})
	e := b.Publish(TurnFailed{Agent: "a", Err: "x"})
	b.View().Apply(e) // a log writer feeding the broker's view again
	s := b.View().Snapshot(time.Now())
	if a, _ := s.Agent("a"); a.Failures != 1 {
		t.Errorf("failures = %d after one event applied twice", a.Failures)
	}
}

func TestViewStartsAttemptsAfresh(t *testing.T) {
	b := play(time.Now(), RunStarted{Team: []AgentInfo{{ID: "a"}}},
		AnswerAccepted{Agent: "a", Label: "agent1.1", AnonLabel: "agent1"},
		TurnFailed{Agent: "a"},
		RunRestarted{Agent: "a", Reason: "wrong"},
		TurnStarted{Header: Header{Attempt: 2}, Agent: "a"},
	)
	s := b.View().Snapshot(time.Now())
	a, _ := s.Agent("a")
	if s.Attempt != 2 || s.Epoch != 0 || a.Answers != 0 || a.Failures != 1 || len(s.Answers) != 1 {
		t.Errorf("attempt %d epoch %d, a answers %d failures %d, run answers %d", s.Attempt, s.Epoch, a.Answers, a.Failures, len(s.Answers))
	}
}

func TestViewSaysTheRunsEndWithItsTallyAndUsage(t *testing.T) {
	a1 := AnswerRef{Label: "agent1", Agent: "a", Answer: "agent1.1"}
	b1 := AnswerRef{Label: "agent2", Agent: "b", Answer: "agent2.1"}
	for _, tc := range []struct {
		name   string
		events []Event
		want   string
	}{
		{"completed", []Event{
			AnswerAccepted{Agent: "a", Label: "agent1.1", AnonLabel: "agent1", Answers: []AnswerRef{a1}},
			AnswerAccepted{Agent: "b", Label: "agent2.1", AnonLabel: "agent2", Answers: []AnswerRef{a1, b1}},
			TurnEnded{Agent: "a", Usage: Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.001}},
			TurnEnded{Agent: "b", Usage: Usage{InputTokens: 50, OutputTokens: 10, CostUSD: 0.0005}},
			AgentFailed{Agent: "c", Err: "401"},
			WinnerSelected{Agent: "a", Votes: map[string]int{"a": 2, "b": 0}, How: "plurality", Label: "agent1.1"},
			FinalAnswer{Agent: "a", Text: "A", Reason: "presentation", Usage: Usage{InputTokens: 10, OutputTokens: 5}},
			RunFinished{Status: "completed", Winner: "a"},
		}, "run completed: winner a with agent1.1 (plurality; votes a=2 b=0); 2 answers; left the run: c; 160 in, 35 out tokens, $0.0015"},
		{"timed out with votes, in a second attempt", []Event{
			AnswerAccepted{Agent: "a", Label: "agent1.1", AnonLabel: "agent1", Answers: []AnswerRef{a1}},
			RunRestarted{Agent: "a", Reason: "wrong"},
			AnswerAccepted{Header: Header{Attempt: 2}, Agent: "b", Label: "agent2.1", AnonLabel: "agent1", Answers: []AnswerRef{{Label: "agent1", Agent: "b", Answer: "agent2.1"}}},
			VoteAccepted{Header: Header{Attempt: 2}, Agent: "a", Target: "b"},
			RunFinished{Header: Header{Attempt: 2}, Status: "timeout", Err: "deadline"},
		}, "run timeout: votes b=1; 2 answers in 2 attempts; 0 in, 0 out tokens"},
		{"failed before any answer", []Event{
			AgentFailed{Agent: "a", Err: "401"}, AgentFailed{Agent: "b", Err: "500"},
			RunFinished{Status: "failed", Err: "every agent failed"},
		}, "run failed; no answers; left the run: a, b; 0 in, 0 out tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append([]Event{RunStarted{Team: []AgentInfo{{ID: "a"}, {ID: "b"}, {ID: "c"}}}}, tc.events...)
			b := play(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), events[:len(events)-1]...)
			fin := b.Publish(events[len(events)-1])
			if got := b.View().Describe(fin); got != tc.want {
				t.Errorf("the last line = %q\n                  want %q", got, tc.want)
			}
			// Every other event reads as Describe says it.
			vote := VoteAccepted{Agent: "a", Target: "b", Reason: "r"}
			if got := b.View().Describe(vote); got != Describe(vote) {
				t.Errorf("View.Describe(vote) = %q, want Describe's %q", got, Describe(vote))
			}
			var none *View // a runner that shares no view
			if got := none.Describe(fin); got != Describe(fin) {
				t.Errorf("nil View.Describe(run_finished) = %q, want Describe's %q", got, Describe(fin))
			}
		})
	}
}

func TestViewCountsToolCallsAndRoundsPerAgent(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := play(t0,
		RunStarted{Question: "q", Team: []AgentInfo{{ID: "a"}, {ID: "b"}}},
		TurnStarted{Agent: "a"},
		ToolCalled{Agent: "a", Tool: "add", Args: `{"a":2,"b":3}`, Result: "5", Duration: 40 * time.Microsecond},
		ToolCalled{Agent: "a", Tool: "lookup", Args: `{"country":"Mars"}`, Result: "no capital known", IsError: true},
		ToolCalled{Agent: "a", Tool: "add", Args: `{"a":5,"b":1}`, Result: "6"},
		TurnEnded{Agent: "a", Usage: Usage{InputTokens: 30, OutputTokens: 6}, ToolRounds: 2},
		ToolCalled{Agent: "b", Tool: "add", Result: "1"},
		TurnEnded{Agent: "b", ToolRounds: 1},
		RunFinished{Status: "completed", Winner: "a"},
	)
	s := b.View().Snapshot(t0.Add(time.Minute))
	av, _ := s.Agent("a")
	if av.ToolCalls != 3 || av.ToolErrors != 1 || av.ToolRounds != 2 {
		t.Errorf("a: %d calls, %d errors, %d rounds; want 3, 1, 2", av.ToolCalls, av.ToolErrors, av.ToolRounds)
	}
	bv, _ := s.Agent("b")
	if bv.ToolCalls != 1 || bv.ToolErrors != 0 || bv.ToolRounds != 1 {
		t.Errorf("b: %d calls, %d errors, %d rounds; want 1, 0, 1", bv.ToolCalls, bv.ToolErrors, bv.ToolRounds)
	}
	if got, want := s.Tools(), "4 tool calls (1 failed) in 3 rounds"; got != want {
		t.Errorf("Tools() = %q, want %q", got, want)
	}
	if got := s.Summary(); !strings.Contains(got, "; 4 tool calls (1 failed) in 3 rounds; 30 in, 6 out tokens") {
		t.Errorf("summary %q does not say the tool use before the usage", got)
	}
}

func TestSummaryWithoutToolsSaysNothingOfThem(t *testing.T) {
	b := play(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), RunStarted{Team: []AgentInfo{{ID: "a"}}}, TurnEnded{Agent: "a"})
	s := b.View().Snapshot(time.Time{})
	if got := s.Summary(); strings.Contains(got, "tool") {
		t.Errorf("summary %q mentions tools in a run without any", got)
	}
}

func TestDescribeToolCallSaysToolArgsResultAndTime(t *testing.T) {
	for _, c := range []struct {
		e    ToolCalled
		want string
	}{
		{ToolCalled{Agent: "a", Tool: "add", Args: `{"a":2,"b":3}`, Result: "5", Duration: 42_300 * time.Nanosecond},
			`a called add({"a":2,"b":3}) → 5 [42µs]`},
		{ToolCalled{Agent: "b", Tool: "lookup", Args: `{"country":"Mars"}`, Result: `no capital known for "Mars"`, IsError: true, Duration: 12_400 * time.Microsecond},
			`b called lookup({"country":"Mars"}) → error no capital known for "Mars" [12ms]`},
		{ToolCalled{Agent: "c", Tool: "slow", Args: "{}", Duration: 1520 * time.Millisecond},
			`c called slow({}) → [1.5s]`},
	} {
		if got := Describe(c.e); got != c.want {
			t.Errorf("Describe = %q\nwant       %q", got, c.want)
		}
	}
	for _, c := range []struct {
		e    ToolProgress
		want string
	}{
		{ToolProgress{Agent: "a", Tool: "mcp__e__op", Progress: 1, Total: 4}, "a: mcp__e__op 1/4 (25%)"},
		{ToolProgress{Agent: "a", Tool: "mcp__e__op", Progress: 7}, "a: mcp__e__op 7"},
		{ToolProgress{Agent: "b", Tool: "mcp__e__op", Message: "log info: fetched"}, "b: mcp__e__op: log info: fetched"},
	} {
		if got := Describe(c.e); got != c.want {
			t.Errorf("Describe = %q\nwant       %q", got, c.want)
		}
	}
	if got := Describe(TurnEnded{Agent: "a", Usage: Usage{InputTokens: 3, OutputTokens: 1}, ToolRounds: 2}); got != "a turn ended: 3 in, 1 out tokens, 2 tool rounds" {
		t.Errorf("TurnEnded: %q", got)
	}
}

func TestToolDurationKeepsMicrosecondsThroughTheRecord(t *testing.T) {
	r := ToRecord(ToolCalled{Agent: "a", Tool: "add", Duration: 42_300 * time.Nanosecond})
	if r.DurationMS != 0.042 {
		t.Errorf("duration_ms = %v, want 0.042 (a sub-millisecond call must not log as 0)", r.DurationMS)
	}
	if got := r.ToolDuration(); got != 42*time.Microsecond {
		t.Errorf("ToolDuration = %s, want 42µs", got)
	}
}

// An interrupted run leaves no agent "done" (issue 22): the one cut off in
// its turn is interrupted, the others keep what they last did; a
// completed run's are done.
func TestViewInterruptedRunLeavesNoAgentDone(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a1 := AnswerRef{Label: "agent1", Agent: "a", Answer: "agent1.1"}
	events := []Event{
		RunStarted{Question: "q", Team: []AgentInfo{{ID: "a"}, {ID: "b"}, {ID: "c"}}},
		TurnStarted{Agent: "a"}, TurnStarted{Agent: "b"}, TurnStarted{Agent: "c"},
		AnswerAccepted{Agent: "a", Content: "A", Label: "agent1.1", AnonLabel: "agent1", Answers: []AnswerRef{a1}},
		TurnEnded{Agent: "a"},
		VoteAccepted{Agent: "b", Target: "a", TargetLabel: "agent1", TargetAnswer: "agent1.1"},
		TurnEnded{Agent: "b"},
	}
	status := func(fin RunFinished) map[string]string {
		s := play(t0, append(events, fin)...).View().Snapshot(t0.Add(time.Minute))
		out := map[string]string{}
		for _, ag := range s.Agents {
			out[ag.ID] = ag.Status
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"a": StatusAnswered, "b": StatusVoted, "c": StatusInterrupted},
		status(RunFinished{Status: "interrupted", Err: "interrupted"})); diff != "" {
		t.Errorf("interrupted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": StatusDone, "b": StatusDone, "c": StatusDone},
		status(RunFinished{Status: "completed"})); diff != "" {
		t.Errorf("completed (-want +got):\n%s", diff)
	}
}
