package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/massgen/massgen/internal/event"
)

// Every status a card can show: failed with its error, restarted, and
// stalled with how long (the view decides; the card says it).
func TestCardsShowEveryStatus(t *testing.T) {
	s := newScript()
	tm := team(3)
	s.at(0, event.RunStarted{Question: "q", Team: tm})
	for _, a := range tm {
		s.at(100*time.Millisecond, event.TurnStarted{Agent: a.ID})
	}
	s.at(time.Second, event.AgentFailed{Agent: "researcher", Err: "openai: 401 invalid api key", Reason: "3 failed turns"})
	s.at(2*time.Second, event.TurnRestarted{Agent: "critic", Cause: "writer", Reason: "new answer from writer"})
	s.at(45 * time.Second) // writer has been silent in its turn since 0.1s
	m := sized(Options{}, 100, 30)
	m.Update(s.batch())
	got := renderAs(t, m, colorprofile.NoTTY)
	for _, want := range []string{"failed", "openai: 401 invalid api key", "restarted", "stalled 44.9s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the frame lacks %q:\n%s", want, got)
		}
	}
}

// More agents than rows: the compact list says how many are hidden and
// keeps the selected agent in sight.
func TestCompactListScrollsToTheSelectedAgent(t *testing.T) {
	s := midRun(40)
	m := sized(Options{}, 80, 24)
	m.Update(s.batch())
	got := renderAs(t, m, colorprofile.NoTTY)
	if !strings.Contains(got, "0 rows above") || strings.Contains(got, "agent20 ") {
		t.Fatalf("40 agents at 80×24: no hidden-rows line, or the 20th row shown:\n%s", got)
	}
	for range 19 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	}
	got = renderAs(t, m, colorprofile.NoTTY)
	if !strings.Contains(got, "▶ agent20") || strings.Contains(got, "0 rows above") {
		t.Errorf("after 19 tabs agent20 is not in sight, or the list did not scroll:\n%s", got)
	}
}

// An agent's page follows its newest text; PgUp goes back to older text,
// Esc returns to the cards.
func TestAgentPageScrolls(t *testing.T) {
	s := newScript()
	tm := team(1)
	s.at(0, event.RunStarted{Question: "q", Team: tm}, event.TurnStarted{Agent: tm[0].ID})
	for i := range 100 {
		s.at(time.Second, event.TextDelta{Agent: tm[0].ID, Text: fmt.Sprintf("line %d\n", i)})
	}
	m := sized(Options{}, 80, 24)
	m.Update(s.batch())
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	got := renderAs(t, m, colorprofile.NoTTY)
	if !strings.Contains(got, "line 99") || strings.Contains(got, "line 50\n") {
		t.Fatalf("the agent page does not follow the newest text:\n%s", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	got = renderAs(t, m, colorprofile.NoTTY)
	if strings.Contains(got, "line 99") || !strings.Contains(got, "line 45") {
		t.Errorf("two pages up, the agent page does not show older text:\n%s", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if m.page != pageMain {
		t.Errorf("esc: page %d, want the main page", m.page)
	}
}

// q mid-run cancels the run once and quits; after the end it only quits.
func TestQuitKey(t *testing.T) {
	cancels := 0
	m := sized(Options{Cancel: func() { cancels++ }}, 80, 24)
	s := midRun(3)
	m.Update(s.batch())
	// q mid-run asks first (issue 22); any other key keeps the run going
	// and is not acted upon.
	keyQ := tea.KeyPressMsg{Code: 'q', Text: "q"}
	for _, k := range []tea.KeyPressMsg{keyQ, {Code: 'v', Text: "v"}} {
		if _, cmd := m.Update(k); cmd != nil || cancels != 0 || m.quitEarly || m.page != pageMain {
			t.Fatalf("q mid-run, then %s: command %v, %d cancels, quitEarly %v, page %v", k, cmd, cancels, m.quitEarly, m.page)
		}
	}
	m.Update(keyQ)
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "Cancel the run? q/y cancels it") || !strings.Contains(got, "massgen --continue") {
		t.Fatalf("q mid-run does not ask:\n%s", got)
	}
	if _, cmd := m.Update(keyQ); cmd == nil || cancels != 1 || !m.quitEarly {
		t.Fatalf("q twice mid-run: command %v, %d cancels, quitEarly %v", cmd, cancels, m.quitEarly)
	}
	m = sized(Options{Cancel: func() { cancels++ }}, 80, 24)
	finished(s, 3)
	m.Update(s.batch())
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); cmd == nil || cancels != 1 || m.quitEarly {
		t.Errorf("ctrl+c after the end: command %v, %d cancels, quitEarly %v", cmd, cancels, m.quitEarly)
	}
}

// A second run on the same display starts from a clean slate.
func TestNextRunResetsTheDisplay(t *testing.T) {
	s := midRun(3)
	finished(s, 3)
	m := sized(Options{}, 80, 24)
	m.Update(s.batch())
	next := newScript()
	next.at(0, event.RunStarted{Question: "second question", Team: team(3)})
	m.Update(next.batch())
	if m.finished || len(m.timeline) != 1 || len(m.agents) != 0 {
		t.Errorf("after a new RunStarted: finished %v, %d timeline entries, %d agents with text", m.finished, len(m.timeline), len(m.agents))
	}
}

// A running tool's progress shows on its agent's card, one line that
// each tick replaces and the call's outcome ends.
func TestCardFollowsARunningToolsProgress(t *testing.T) {
	s := newScript()
	tm := team(2)
	a := tm[0].ID
	s.at(0, event.RunStarted{Question: "q", Team: tm})
	s.at(100*time.Millisecond, event.TurnStarted{Agent: a})
	s.at(200*time.Millisecond, event.ToolProgress{Agent: a, Tool: "mcp__e__crawl", Progress: 1, Total: 4})
	s.at(300*time.Millisecond, event.ToolProgress{Agent: a, Tool: "mcp__e__crawl", Progress: 3, Total: 4, Message: "page 3"})
	m := sized(Options{}, 100, 30)
	m.Update(s.batch())
	got := renderAs(t, m, colorprofile.NoTTY)
	if !strings.Contains(got, "⚙ mcp__e__crawl 3/4 (75%): page 3") || strings.Contains(got, "1/4") {
		t.Errorf("the card does not show the latest tick alone:\n%s", got)
	}
	next := newScript()
	next.at(400*time.Millisecond, event.ToolCalled{Agent: a, Tool: "mcp__e__crawl", Result: "done"})
	m.Update(next.batch())
	if tools := m.agents[a].tools; len(tools) != 1 || tools[0] != "⚙ mcp__e__crawl ok" {
		t.Errorf("after the call: tool lines %q, want the outcome alone", tools)
	}
}

// An answer written as new_answer's arguments streams onto its agent's
// card, with the tokens growing, while the turn runs (issue 22); the
// agent page then shows the answer and the vote, not only turn marks.
func TestCardShowsAStreamedAnswerAndItsTokens(t *testing.T) {
	s := newScript()
	tm := team(2)
	a, b := tm[0].ID, tm[1].ID
	s.at(0, event.RunStarted{Question: "q", Team: tm})
	s.at(100*time.Millisecond, event.TurnStarted{Agent: a}, event.TurnStarted{Agent: b})
	m := sized(Options{}, 100, 30)
	m.Update(s.batch())
	before := renderAs(t, m, colorprofile.NoTTY)
	if strings.Contains(before, "~") {
		t.Fatalf("tokens before anything streamed:\n%s", before)
	}
	s.at(200*time.Millisecond, event.TextDelta{Agent: a, Tool: "new_answer", Text: "The capital of France is Paris, "})
	m.Update(s.batch())
	mid := renderAs(t, m, colorprofile.NoTTY)
	s.at(300*time.Millisecond, event.TextDelta{Agent: a, Tool: "new_answer", Text: "on the Seine, with about two million people."})
	m.Update(s.batch())
	later := renderAs(t, m, colorprofile.NoTTY)
	for _, want := range []string{"✎ new_answer:", "The capital of France is Paris,", "~8 tok"} {
		if !strings.Contains(mid, want) {
			t.Errorf("mid-turn card lacks %q:\n%s", want, mid)
		}
	}
	if !strings.Contains(later, "~19 tok") || !strings.Contains(later, "two million") {
		t.Errorf("the tokens or the text do not grow:\n%s", later)
	}
	s.at(400*time.Millisecond, event.AnswerAccepted{Agent: a, Content: "The capital of France is Paris, on the Seine, with about two million people.",
		Label: "agent1.1", AnonLabel: "agent1"},
		event.TurnEnded{Agent: a, Usage: event.Usage{InputTokens: 100, OutputTokens: 20}})
	s.at(500*time.Millisecond, event.VoteAccepted{Agent: b, Target: a, TargetLabel: "agent1", TargetAnswer: "agent1.1", Reason: "it names the river"})
	m.Update(s.batch())
	if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "120 tok") || strings.Contains(got, "~") {
		t.Errorf("once the turn ended its usage should replace the estimate:\n%s", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	page := renderAs(t, m, colorprofile.NoTTY)
	for _, want := range []string{"two million people.", "✓ answer accepted as agent1.1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the agent page lacks %q:\n%s", want, page)
		}
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if page := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(page, "✓ vote for agent1 (researcher's agent1.1): it names the river") {
		t.Errorf("the voter's page lacks its vote:\n%s", page)
	}
}

// At 120 columns (the side column of the wide layout) a timeline entry
// wraps: no vote or refusal loses its reason (issue 22).
func TestTimelineWrapsReasons(t *testing.T) {
	s := newScript()
	tm := team(3)
	s.at(0, event.RunStarted{Question: "q", Team: tm})
	reasons := []string{
		"The answer names the capital, its river and its population, and cites the 2021 census figure precisely",
		"A vote must name one of the answers shown: agent7 is not one of them (agent1, agent2)",
	}
	s.at(time.Second, event.VoteAccepted{Agent: tm[1].ID, Target: tm[0].ID, TargetLabel: "agent1", TargetAnswer: "agent1.1", Reason: reasons[0]})
	s.at(2*time.Second, event.ActionRejected{Agent: tm[2].ID, Reason: reasons[1]})
	m := sized(Options{}, 120, 40)
	m.Update(s.batch())
	got := renderAs(t, m, colorprofile.NoTTY)
	// The timeline is the right-hand column: join its lines back.
	var side []string
	for _, l := range strings.Split(got, "\n") {
		if r := []rune(l); len(r) > 120-sideWidth {
			side = append(side, strings.TrimSpace(string(r[120-sideWidth:])))
		}
	}
	joined := strings.Join(side, " ")
	for _, r := range reasons {
		if !strings.Contains(joined, r) {
			t.Errorf("the timeline lost the reason %q:\n%s", r, got)
		}
	}
}
