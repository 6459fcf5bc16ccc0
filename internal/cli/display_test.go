package cli

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// The plain display keeps no state of its own: its lines are Describe's,
// and its last line sums the run up from the view, which counted the
// turns' usage although the display never sees a TurnEnded.
func TestDisplayEndsWithTheRunFromItsView(t *testing.T) {
	b := event.NewBroker()
	sub := b.Subscribe(append(slices.Clone(event.Deltas), event.Bookkeeping...)...)
	a1 := event.AnswerRef{Label: "agent1", Agent: "a", Answer: "agent1.1"}
	for _, e := range []event.Event{
		event.RunStarted{Question: "q", Team: []event.AgentInfo{{ID: "a", Backend: "sim", Model: "m"}, {ID: "b", Backend: "sim", Model: "m"}}},
		event.TurnStarted{Agent: "a"},
		event.TextDelta{Agent: "a", Text: "thinking aloud"},
		event.AnswerAccepted{Agent: "a", Content: "Paris", Label: "agent1.1", AnonLabel: "agent1", Answers: []event.AnswerRef{a1}},
		event.TurnEnded{Agent: "a", Usage: event.Usage{InputTokens: 120, OutputTokens: 30, CostUSD: 0.002}},
		event.VoteAccepted{Agent: "b", Target: "a", TargetLabel: "agent1", TargetAnswer: "agent1.1", Reason: "right"},
		event.TurnEnded{Agent: "b", Usage: event.Usage{InputTokens: 80, OutputTokens: 10, CostUSD: 0.001}},
		event.WinnerSelected{Agent: "a", Votes: map[string]int{"a": 1}, How: "plurality", Label: "agent1.1", Answers: []event.AnswerRef{a1}},
		event.FinalAnswer{Agent: "a", Text: "Paris", Reason: "single agent: the winning answer is final"},
		event.RunFinished{Status: "completed", Winner: "a"},
	} {
		b.Publish(e)
	}
	b.Close()
	var stderr bytes.Buffer
	newDisplay(&Env{Stderr: &stderr}, false).run(sub)
	want := `massgen: run started: 2 agents: a [sim/m], b [sim/m]
  a working
  a answered agent1.1: Paris
  b voted for a (agent1.1, shown as agent1): right
  winner: a with agent1.1 (plurality; votes a=1)
  final answer by a: single agent: the winning answer is final
massgen: run completed: winner a with agent1.1 (plurality; votes a=1); 1 answer; 200 in, 40 out tokens, $0.0030
`
	if got := stderr.String(); got != want {
		t.Errorf("display printed:\n%s\nwant:\n%s", got, want)
	}
}

func TestAutomationDisplayPrintsNoProgress(t *testing.T) {
	b := event.NewBroker()
	sub := b.Subscribe()
	b.Publish(event.RunStarted{Team: []event.AgentInfo{{ID: "a"}}})
	b.Publish(event.RunFinished{Status: "completed", Winner: "a"})
	b.Close()
	var stdout, stderr bytes.Buffer
	newDisplay(&Env{Stdout: &stdout, Stderr: &stderr}, true).run(sub)
	if stdout.Len()+stderr.Len() != 0 {
		t.Errorf("automation display printed %q on stdout and %q on stderr", stdout.String(), stderr.String())
	}
}

// On a real run the last progress line names the winner, the tally, the
// answers and the tokens.
func TestPlainRunEndsWithASummaryLine(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--config", "@examples/sim_three_agents", "What is the capital of France?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var last string
	for line := range strings.Lines(r.stderr) {
		if strings.HasPrefix(line, "massgen: ") {
			last = strings.TrimSpace(line)
		}
	}
	re := regexp.MustCompile(`^massgen: run completed: winner \w+ with agent\d\.\d+ \(plurality; votes (\w+=\d ?)+\); \d+ answers; [1-9]\d* in, [1-9]\d* out tokens$`)
	if !re.MatchString(last) {
		t.Errorf("last progress line = %q, want it to match %s\nstderr:\n%s", last, re, r.stderr)
	}
}

// Tool calls are progress: the plain display prints each one (agent, tool,
// arguments, outcome and result, time), and the last line counts them
// with the rounds the turns reported, although TurnEnded is not shown.
func TestDisplayShowsToolCalls(t *testing.T) {
	b := event.NewBroker()
	sub := b.Subscribe(append(slices.Clone(event.Deltas), event.Bookkeeping...)...)
	for _, e := range []event.Event{
		event.RunStarted{Question: "q", Team: []event.AgentInfo{{ID: "a"}}},
		event.TurnStarted{Agent: "a"},
		event.ToolCalled{Agent: "a", Tool: "add", Args: `{"a":2,"b":3}`, Result: "5", Duration: 41_700 * time.Nanosecond},
		event.ToolCalled{Agent: "a", Tool: "lookup", Args: `{"country":"Mars"}`, Result: `no capital known for "Mars"`, IsError: true, Duration: 3 * time.Millisecond},
		event.TurnEnded{Agent: "a", Usage: event.Usage{InputTokens: 50, OutputTokens: 5}, ToolRounds: 1},
		event.RunFinished{Status: "failed"},
	} {
		b.Publish(e)
	}
	b.Close()
	var stderr bytes.Buffer
	newDisplay(&Env{Stderr: &stderr}, false).run(sub)
	want := `massgen: run started: 1 agent: a
  a working
  a called add({"a":2,"b":3}) → 5 [42µs]
  a called lookup({"country":"Mars"}) → error no capital known for "Mars" [3ms]
massgen: run failed; no answers; 2 tool calls (1 failed) in 1 round; 50 in, 5 out tokens
`
	if got := stderr.String(); got != want {
		t.Errorf("display printed:\n%s\nwant:\n%s", got, want)
	}
}

// A tool's progress ticks are thinned: the first, one per quarter passed
// (the end included), at most one a second without a total; the tool's
// call line resets it, so its next call shows its first tick again.
func TestDisplayThrottlesToolProgress(t *testing.T) {
	b := event.NewBroker()
	sub := b.Subscribe(append(slices.Clone(event.Deltas), event.Bookkeeping...)...)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int, e event.Event) event.Event {
		return event.Stamped(e, 0, t0.Add(time.Duration(ms)*time.Millisecond))
	}
	op := func(p float64) event.ToolProgress {
		return event.ToolProgress{Agent: "a", Tool: "mcp__e__op", Progress: p, Total: 100}
	}
	logged := func(msg string) event.ToolProgress {
		return event.ToolProgress{Agent: "b", Tool: "mcp__e__crawl", Message: msg}
	}
	b.Publish(event.RunStarted{Team: []event.AgentInfo{{ID: "a"}, {ID: "b"}}})
	for i := 1; i <= 100; i++ {
		b.Publish(at(i, op(float64(i))))
	}
	b.Publish(at(0, logged("one")))
	b.Publish(at(500, logged("two")))    // within the second: left out
	b.Publish(at(1000, logged("three"))) // a second later: shown
	b.Publish(event.ToolCalled{Agent: "a", Tool: "mcp__e__op", Args: "{}", Result: "done"})
	b.Publish(at(200, op(3))) // the next call's first tick
	b.Close()
	var stderr bytes.Buffer
	newDisplay(&Env{Stderr: &stderr}, false).run(sub)
	var got []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "mcp__") {
			got = append(got, strings.TrimSpace(l))
		}
	}
	want := []string{
		"a: mcp__e__op 1/100 (1%)",
		"a: mcp__e__op 25/100 (25%)",
		"a: mcp__e__op 50/100 (50%)",
		"a: mcp__e__op 75/100 (75%)",
		"a: mcp__e__op 100/100 (100%)",
		"b: mcp__e__crawl: one",
		"b: mcp__e__crawl: three",
		"a called mcp__e__op({}) → done [0s]",
		"a: mcp__e__op 3/100 (3%)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
