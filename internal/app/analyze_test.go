package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/event"
)

// A run where b's first turn is cancelled by a's answer: its tokens are
// wasted work; the phases split at the winner and the presentation.
func TestAnalyzeSplitsWorkByAgentAndPhaseAndCountsWaste(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	recs := []event.Record{
		{Type: event.TypeRunStarted, Time: at(0), Text: "q", Agents: []string{"a", "b"}},
		{Type: event.TypeTurnStarted, Time: at(0), Agent: "a"},
		{Type: event.TypeTurnStarted, Time: at(0), Agent: "b"},
		{Type: event.TypeAnswerAccepted, Time: at(100), Agent: "a", Label: "agent1.1"},
		{Type: event.TypeTurnEnded, Time: at(100), Agent: "a", InputTokens: 100, OutputTokens: 50},
		{Type: event.TypeTurnRestarted, Time: at(110), Agent: "b", Target: "a"},
		{Type: event.TypeTurnEnded, Time: at(120), Agent: "b", InputTokens: 90, OutputTokens: 30, CostUSD: 0.5},
		{Type: event.TypeTurnStarted, Time: at(120), Agent: "b"},
		{Type: event.TypeToolCalled, Time: at(150), Agent: "b", Text: "search"},
		{Type: event.TypeVoteAccepted, Time: at(200), Agent: "b", Target: "a"},
		{Type: event.TypeTurnEnded, Time: at(200), Agent: "b", InputTokens: 200, OutputTokens: 10},
		{Type: event.TypeTurnStarted, Time: at(200), Agent: "a"},
		{Type: event.TypeVoteAccepted, Time: at(250), Agent: "a", Target: "a"},
		{Type: event.TypeTurnEnded, Time: at(250), Agent: "a", InputTokens: 150, OutputTokens: 5},
		{Type: event.TypeWinnerSelected, Time: at(250), Agent: "a"},
		{Type: event.TypeFinalStarted, Time: at(260), Agent: "a"},
		{Type: event.TypeFinalAnswer, Time: at(400), Agent: "a", InputTokens: 300, OutputTokens: 80},
		{Type: event.TypeRunFinished, Time: at(410), Agent: "a", Status: "completed"},
	}
	got := Analyze(recs)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	want := Analysis{
		Question: "q", Status: "completed", Winner: "a", Duration: ms(410), Answers: 1, Votes: 2,
		Agents: []AgentWork{
			{Agent: "a", Turns: 2, Answers: 1, Votes: 1, Busy: ms(150), Usage: event.Usage{InputTokens: 550, OutputTokens: 135}},
			{Agent: "b", Turns: 2, Restarted: 1, Votes: 1, ToolCalls: 1, Busy: ms(200), Usage: event.Usage{InputTokens: 290, OutputTokens: 40, CostUSD: 0.5},
				Wasted: event.Usage{InputTokens: 90, OutputTokens: 30, CostUSD: 0.5}, WastedFor: ms(120)},
		},
		Phases: []PhaseWork{
			{Name: "coordination", Duration: ms(250), Usage: event.Usage{InputTokens: 540, OutputTokens: 95, CostUSD: 0.5}},
			{Name: "presentation", Duration: ms(140), Usage: event.Usage{InputTokens: 300, OutputTokens: 80}},
			{Name: "post-evaluation"},
		},
		Total:  event.Usage{InputTokens: 840, OutputTokens: 175, CostUSD: 0.5},
		Wasted: event.Usage{InputTokens: 90, OutputTokens: 30, CostUSD: 0.5},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("analysis (-want +got):\n%s", d)
	}
}

// A run that died has no run_finished: the analysis says so with an empty
// status and still counts what happened.
func TestAnalyzeOfARunThatDied(t *testing.T) {
	got := Analyze([]event.Record{
		{Type: event.TypeRunStarted, Text: "q", Agents: []string{"a"}},
		{Type: event.TypeTurnStarted, Agent: "a"},
		{Type: event.TypeAnswerAccepted, Agent: "a"},
	})
	if got.Status != "" || got.Answers != 1 || len(got.Agents) != 1 || got.Agents[0].Turns != 1 {
		t.Errorf("analysis = %+v", got)
	}
}
