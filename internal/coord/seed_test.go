package coord

import (
	"encoding/json"
	"testing"
)

// Seeded answers (a resumed session turn) are the answer set from the
// start: every first turn sees them, the seeded agent is not owed a first
// answer, and its seed can win without being asked for again.
func TestSeededAnswersStartTheRun(t *testing.T) {
	m := New(Config{Agents: []string{"a", "b"}, Seed: []Seed{{Agent: "a", Content: " kept "}, {Agent: "ghost", Content: "x"}, {Agent: "b", Content: " "}}})
	cmds := m.Step(Start{})
	var starts []StartTurn
	for _, c := range cmds {
		if st, ok := c.(StartTurn); ok {
			starts = append(starts, st)
		}
	}
	if len(starts) != 2 || m.Epoch() != 1 || m.AnswerCount("a") != 1 || m.AnswerCount("b") != 0 {
		t.Fatalf("starts %+v, epoch %d", starts, m.Epoch())
	}
	for _, st := range starts {
		if st.Epoch != 1 || len(st.Answers) != 1 || st.Answers[0].Agent != "a" || st.Answers[0].Content != "kept" {
			t.Errorf("%s's first turn sees %+v at epoch %d", st.Agent, st.Answers, st.Epoch)
		}
	}
	if m.byID["a"].firstTurn || !m.byID["b"].firstTurn {
		t.Error("the seeded agent is treated as owed its first answer, or the other is not")
	}
	// Both vote for the seed: it wins.
	for _, st := range starts {
		m.Step(Proposed{Agent: st.Agent, Turn: st.Turn, Seen: 1, Action: Action{Kind: ActVote, Label: "agent1", Reason: "good"}})
	}
	if m.win == nil || m.win.Winner != "a" {
		t.Fatalf("winner %+v", m.win)
	}
	// The seed is part of the replay log's Config.
	b, err := json.Marshal(m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || len(back.Seed) != 3 {
		t.Errorf("config round trip: %s (%v)", b, err)
	}
}

// Seeded votes (a resumed turn's last epoch) count from the start: their
// voters are not asked again, and when every agent's vote was carried the
// decision is made at once, with no turn started.
func TestSeededVotesAreNotAskedForAgain(t *testing.T) {
	seeds := []Seed{{Agent: "a", Content: "A"}, {Agent: "b", Content: "B"}}
	m := New(Config{Agents: []string{"a", "b", "c"}, Seed: seeds,
		SeedVotes: []Vote{{Voter: "a", Target: "b", Reason: "b is better"}, {Voter: "ghost", Target: "a"}, {Voter: "c", Target: "nobody"}}})
	var started []string
	for _, c := range m.Step(Start{}) {
		if st, ok := c.(StartTurn); ok {
			started = append(started, st.Agent)
		}
	}
	if len(started) != 2 || started[0] != "b" || started[1] != "c" {
		t.Errorf("turns started for %v, want b and c (a's vote was carried; c's was for no answer)", started)
	}
	if got := m.Votes(); len(got) != 1 || got[0] != (Vote{Voter: "a", Target: "b", Label: "agent2", Reason: "b is better"}) {
		t.Errorf("votes %+v, want a's carried vote for b (agent2)", got)
	}

	all := New(Config{Agents: []string{"a", "b"}, Seed: seeds,
		SeedVotes: []Vote{{Voter: "a", Target: "b"}, {Voter: "b", Target: "b"}}})
	cmds := all.Step(Start{})
	var present *Present
	for _, c := range cmds {
		switch c := c.(type) {
		case StartTurn:
			t.Errorf("a turn was started for %s though every vote was carried", c.Agent)
		case Present:
			present = &c
		}
	}
	if present == nil || present.Winner != "b" || present.Tally["b"] != 2 {
		t.Fatalf("commands %+v, want b presenting with 2 votes", cmds)
	}
	seedsBack, votesBack := all.Carried()
	if len(seedsBack) != 2 || len(votesBack) != 2 {
		t.Errorf("Carried() = %+v, %+v; want both answers and both votes", seedsBack, votesBack)
	}
}
