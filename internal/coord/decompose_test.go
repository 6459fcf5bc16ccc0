package coord

import (
	"strings"
	"testing"
)

func TestParseActionReadsStop(t *testing.T) {
	act, reason, _, ok := ParseAction([]Call{{Name: ToolStop, Arguments: `{"summary":"parser done","status":"blocked"}`}}, "")
	if !ok || act.Kind != ActStop || act.Reason != "parser done" || act.Label != StopBlocked {
		t.Fatalf("stop parsed as %+v ok=%v (%s)", act, ok, reason)
	}
	act, _, _, ok = ParseAction([]Call{{Name: ToolStop, Arguments: `{"summary":"done"}`}}, "")
	if !ok || act.Label != StopComplete {
		t.Fatalf("a stop without status is %+v, want status complete", act)
	}
	_, reason, _, ok = ParseAction([]Call{{Name: ToolStop, Arguments: `{}`}, {Name: ToolNewAnswer, Arguments: `{"content":"x"}`}}, "")
	if ok || !strings.Contains(reason, "both stop and new_answer") {
		t.Fatalf("stop with new_answer: ok=%v reason %q", ok, reason)
	}
	_, reason, _, ok = ParseAction([]Call{{Name: ToolStop, Arguments: `{}`}, {Name: ToolStop, Arguments: `{}`}}, "")
	if ok || !strings.Contains(reason, "Multiple stop calls") {
		t.Fatalf("two stops: ok=%v reason %q", ok, reason)
	}
}

// TestStopOutsideDecompositionIsRefused: a team that votes cannot stop.
func TestStopOutsideDecompositionIsRefused(t *testing.T) {
	m := New(Config{Agents: []string{"a", "b"}})
	m.Step(Start{})
	m.Step(Proposed{Agent: "a", Turn: 1, Action: Action{Kind: ActNewAnswer, Content: "x"}})
	cmds := m.Step(Proposed{Agent: "b", Turn: 2, Seen: 1, Action: Action{Kind: ActStop, Label: StopComplete}})
	r := cmds[0].(Reply)
	if r.Verdict.Outcome != Rejected || !strings.Contains(r.Verdict.Message, "only available in decomposition mode") || m.Status("b") != Working {
		t.Fatalf("stop in voting mode: %+v, b is %s", r.Verdict, m.Status("b"))
	}
}

// TestAFailedPresenterIsReplaced: presenter_agent out of the run (its
// failure budget spent) leaves the merge to the last live agent.
func TestAFailedPresenterIsReplaced(t *testing.T) {
	m := New(Config{Agents: []string{"a", "b", "c"}, Settings: Settings{Decomposition: true, Presenter: "b", FailureBudget: 1}})
	m.Step(Start{})
	m.Step(Proposed{Agent: "a", Turn: 1, Action: Action{Kind: ActNewAnswer, Content: "part a"}})
	m.Step(TurnFailed{Agent: "b", Turn: 2, Err: "boom"})
	m.Step(Proposed{Agent: "c", Turn: 3, Action: Action{Kind: ActNewAnswer, Content: "part c"}})
	var present *Present
	for _, id := range []string{"a", "c"} {
		for _, c := range m.Step(Proposed{Agent: id, Turn: m.byID[id].turn, Seen: m.Epoch(), Action: Action{Kind: ActStop, Label: StopComplete, Reason: id + " done"}}) {
			if p, ok := c.(Present); ok {
				present = &p
			}
		}
	}
	if present == nil || present.Winner != "c" || len(present.Votes) != 2 || present.Votes[1].Stop != StopComplete || present.Votes[1].Reason != "c done" {
		t.Fatalf("presentation: %+v", present)
	}
}

// The round-time and fairness messages name stop, not vote, in
// decomposition mode.
func TestDecompositionMessagesSayStop(t *testing.T) {
	m := New(Config{Agents: []string{"a", "b"}, Settings: Settings{Decomposition: true, FirstRoundTimeout: 60e9, FirstAnswers: FirstAnswersEager}})
	m.Step(Start{})
	var msgs []string
	for _, st := range []RoundStage{RoundSoft, RoundHard} {
		for _, c := range m.Step(RoundTimeUp{Agent: "a", Turn: 1, Stage: st}) {
			if w, ok := c.(WrapUp); ok {
				msgs = append(msgs, w.Message)
			}
		}
	}
	if len(msgs) != 2 {
		t.Fatalf("wrap-ups %q", msgs)
	}
	for _, s := range msgs {
		if strings.Contains(s, "vote") || !strings.Contains(s, "stop") {
			t.Errorf("wrap-up %q", s)
		}
	}
	m = New(Config{Agents: []string{"a", "b"}, Settings: Settings{Decomposition: true, FairnessLeadCap: 1, FirstAnswers: FirstAnswersEager}})
	m.Step(Start{})
	m.byID["a"].answers = []string{"one"} // its next would lead b, still on its first, by 2
	if why := m.leadCapped(m.byID["a"]); strings.Contains(why, "vote") || !strings.Contains(why, "call stop if your subtask is done, or wait") {
		t.Errorf("fairness: %q", why)
	}
}
