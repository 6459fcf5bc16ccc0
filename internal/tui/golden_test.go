package tui

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/massgen/massgen/internal/event"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata")

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// scripted builds a run's events as the orchestrator would publish them,
// stamped at fixed times: the frames depend on nothing but this script.
type scripted struct {
	view   *event.View
	events []event.Event
	seq    uint64
	now    time.Time
}

func newScript() *scripted { return &scripted{view: event.NewView(), now: t0} }

func (s *scripted) at(d time.Duration, es ...event.Event) {
	s.now = t0.Add(d)
	for _, e := range es {
		s.seq++
		e = event.Stamped(e, s.seq, s.now)
		s.view.Apply(e)
		s.events = append(s.events, e)
	}
}

// batch is what the pump would send now: the events since the last batch.
func (s *scripted) batch() batchMsg {
	b := batchMsg{events: s.events, snap: s.view.Snapshot(s.now), now: s.now}
	s.events = nil
	return b
}

func team(n int) []event.AgentInfo {
	names := []string{"researcher", "critic", "writer"}
	var out []event.AgentInfo
	for i := range n {
		id := fmt.Sprintf("agent%02d", i+1)
		if n <= len(names) {
			id = names[i]
		}
		out = append(out, event.AgentInfo{ID: id, Backend: "sim", Model: fmt.Sprintf("sim-%c", 'a'+i%26), Simulated: true})
	}
	return out
}

const finalText = "# Paris\n\nThe capital of France is **Paris**, on the Seine.\n\n- population: about 2.1 million\n- since: 987 (Capetians)\n\n```\nanswer = \"Paris\"\n```\n"

// midRun scripts a run of n agents up to the point where the first answer
// is in, one agent has voted and the others are streaming.
func midRun(n int) *scripted {
	s := newScript()
	tm := team(n)
	s.at(0, event.RunStarted{Question: "What is the capital of France? Answer with a short paragraph.", Team: tm})
	for _, a := range tm {
		s.at(100*time.Millisecond, event.TurnStarted{Agent: a.ID})
	}
	for i, a := range tm {
		s.at(time.Duration(300+10*i)*time.Millisecond, event.TextDelta{Agent: a.ID,
			Text: fmt.Sprintf("Thinking about the question as %s. The capital of France is Paris; ", a.ID)})
	}
	first, second := tm[0].ID, tm[min(1, n-1)].ID
	s.at(900*time.Millisecond, event.ToolCalled{Agent: second, Tool: "web_search", Args: `{"q":"capital of France"}`,
		Result: "Paris", Duration: 40 * time.Millisecond})
	s.at(1500*time.Millisecond, event.AnswerAccepted{Agent: first, Content: "The capital of France is Paris.",
		Label: "agent1.1", AnonLabel: "agent1", Answers: []event.AnswerRef{{Label: "agent1", Agent: first, Answer: "agent1.1"}}},
		event.TurnEnded{Agent: first, Usage: event.Usage{InputTokens: 420, OutputTokens: 96, CostUSD: 0.0012}})
	for _, a := range tm[1:] {
		s.at(1600*time.Millisecond, event.TurnRestarted{Agent: a.ID, Cause: first, Reason: "new answer from " + first})
		s.at(1700*time.Millisecond, event.TurnStarted{Agent: a.ID, Shown: []event.AnswerRef{{Label: "agent1", Agent: first, Answer: "agent1.1"}}})
		s.at(2*time.Second, event.TextDelta{Agent: a.ID, Text: "Agent1 says Paris, which matches what I know; checking the details before voting."})
	}
	s.at(2500*time.Millisecond, event.VoteAccepted{Agent: tm[n-1].ID, Target: first, TargetLabel: "agent1", TargetAnswer: "agent1.1",
		Reason: "Correct and concise."})
	s.at(4200 * time.Millisecond)
	return s
}

// finished continues midRun to the final answer.
func finished(s *scripted, n int) {
	tm := team(n)
	first := tm[0].ID
	for _, a := range tm[:n-1] {
		s.at(5*time.Second, event.VoteAccepted{Agent: a.ID, Target: first, TargetLabel: "agent1", TargetAnswer: "agent1.1", Reason: "Paris is right."})
	}
	tally := map[string]int{first: n}
	s.at(5100*time.Millisecond, event.WinnerSelected{Agent: first, Votes: tally, How: "plurality", Label: "agent1.1"},
		event.FinalStarted{Agent: first, Mode: "presentation"},
		event.FinalDelta{Agent: first, Text: finalText},
		event.FinalAnswer{Agent: first, Text: finalText, Reason: "presentation", Usage: event.Usage{InputTokens: 300, OutputTokens: 60, CostUSD: 0.0009}})
	s.at(6*time.Second, event.RunFinished{Status: "completed", Winner: first})
}

// renderAs renders m with the colour profile p, as the terminal would get it.
func renderAs(t *testing.T, m *model, p colorprofile.Profile) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(m.render()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkFrame compares a frame with testdata/name.golden, and checks what
// every frame must be: exactly the screen's height, no line wider than it.
func checkFrame(t *testing.T, name string, m *model, p colorprofile.Profile) string {
	t.Helper()
	got := renderAs(t, m, p)
	lines := strings.Split(got, "\n")
	if len(lines) != m.height {
		t.Errorf("%s: %d lines, want the screen's %d", name, len(lines), m.height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != m.width {
			t.Errorf("%s: line %d is %d cells wide, want %d: %q", name, i+1, w, m.width, ansi.Strip(l))
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/tui -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./internal/tui -update rewrites it):\n%s", name, path, ansi.Strip(got))
	}
	return ansi.Strip(got)
}

func sized(opts Options, w, h int) *model {
	m := newModel(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func TestGoldenFrames(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		for _, prof := range []struct {
			name string
			p    colorprofile.Profile
		}{{"plain", colorprofile.NoTTY}, {"color", colorprofile.ANSI256}} {
			name := fmt.Sprintf("%dx%d_%s", size.w, size.h, prof.name)
			t.Run(name, func(t *testing.T) {
				s := midRun(3)
				m := sized(Options{}, size.w, size.h)
				m.Update(runMsg{Timeout: 2 * time.Minute})
				m.Update(s.batch())
				mid := checkFrame(t, "mid_"+name, m, prof.p)
				for _, want := range []string{"researcher", "critic", "writer", "sim-a [sim]", "answered", "voted", "working",
					"⚙ web_search ok", "4.2s / 2m00s", "516 tok", "Votes", "Timeline", "writer voted for researcher", "Correct and concise.", "✓ answer accepted as"} {
					if !strings.Contains(mid, want) {
						t.Errorf("the mid-run frame lacks %q", want)
					}
				}
				finished(s, 3)
				m.Update(s.batch())
				end := checkFrame(t, "end_"+name, m, prof.p)
				for _, want := range []string{"Final answer by researcher (plurality)", "Paris", "winner researcher", "completed", "6.0s / 2m00s"} {
					if !strings.Contains(end, want) {
						t.Errorf("the final frame lacks %q", want)
					}
				}
			})
		}
	}
}

func TestGoldenResize(t *testing.T) {
	s := midRun(3)
	m := sized(Options{}, 160, 48)
	m.Update(s.batch())
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	checkFrame(t, "resize_160x48_to_80x24", m, colorprofile.NoTTY)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	checkFrame(t, "resize_to_100x30", m, colorprofile.NoTTY)
}

// Sixteen agents fit at 80×24 (compact rows) and 160×48 (cards).
func TestGoldenSixteenAgents(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		s := midRun(16)
		m := sized(Options{}, size.w, size.h)
		m.Update(s.batch())
		name := fmt.Sprintf("agents16_%dx%d", size.w, size.h)
		got := checkFrame(t, name, m, colorprofile.NoTTY)
		if !strings.Contains(got, "agent01") {
			t.Errorf("%s: the first agent is not shown", name)
		}
		// Tab to the last agent: it comes into sight.
		for range 15 {
			m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		}
		if got := renderAs(t, m, colorprofile.NoTTY); !strings.Contains(got, "▶ agent16") {
			t.Errorf("%s: after 15 tabs the selected agent16 is not in sight:\n%s", name, got)
		}
	}
}

// The pages behind the keys: an agent full screen, the table, the votes, help.
func TestGoldenPages(t *testing.T) {
	s := midRun(3)
	m := sized(Options{}, 80, 24)
	m.Update(s.batch())
	press := func(k tea.KeyPressMsg) { m.Update(k) }
	press(tea.KeyPressMsg{Code: tea.KeyTab})
	press(tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := checkFrame(t, "page_agent", m, colorprofile.NoTTY); !strings.Contains(got, "critic") || !strings.Contains(got, "⚙ web_search ok") {
		t.Error("the agent page does not show critic's transcript")
	}
	press(tea.KeyPressMsg{Code: tea.KeyEscape})
	press(tea.KeyPressMsg{Code: 'r', Text: "r"})
	if got := checkFrame(t, "page_table", m, colorprofile.NoTTY); !strings.Contains(got, "agent1.1") {
		t.Error("the coordination table lacks the answer")
	}
	press(tea.KeyPressMsg{Code: 'v', Text: "v"})
	if got := checkFrame(t, "page_votes", m, colorprofile.NoTTY); !strings.Contains(got, "writer → researcher") {
		t.Error("the votes page lacks writer's vote")
	}
	press(tea.KeyPressMsg{Code: '?', Text: "?"})
	if got := checkFrame(t, "page_help", m, colorprofile.NoTTY); !strings.Contains(got, "coordination table") {
		t.Error("the help page lacks the r key")
	}
	press(tea.KeyPressMsg{Code: '?', Text: "?"})
	if m.page != pageMain {
		t.Errorf("? twice: page %d, want the main page", m.page)
	}
}
