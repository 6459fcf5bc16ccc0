package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// A round's wrap-up reaches the model before its next request whatever it
// was doing (here: writing text, no tool call). After the hard limit the
// turn offers only the workflow tools, and a call of its own tool is
// refused with the reason.
func TestWrapUpsReachTheModelAndTheHardLimitBlocksOwnTools(t *testing.T) {
	inbox := NewInbox()
	m := script(
		reply{text: "Thinking at length…", during: func() {
			inbox.Post(WrapUp{Message: "ROUND TIME LIMIT REACHED: wrap up."})
			inbox.Post(WrapUp{Hard: true, Message: "HARD ROUND TIMEOUT: only vote or new_answer."})
		}},
		reply{calls: []llm.ToolCall{call("t1", "add", `{"a":1,"b":2}`)}},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"Paris, as it stands."}`)}},
	)
	j := &judge{}
	turn := newTurn(m, j, nil, 0)
	turn.Tools, turn.Updates = tooltest.Set(), inbox
	res := turn.Run(t.Context())
	if res.Err != nil || res.Action.Content != "Paris, as it stands." {
		t.Fatalf("result %+v, want the answer accepted", res)
	}
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !slices.Contains(toolNames(reqs[0]), "add") {
		t.Errorf("first request: tools %v, want its own tools too", toolNames(reqs[0]))
	}
	var users []string
	for _, msg := range reqs[1].Messages {
		if msg.Role == llm.RoleUser {
			users = append(users, msg.Content)
		}
	}
	if !slices.ContainsFunc(users, func(s string) bool { return strings.HasPrefix(s, "ROUND TIME LIMIT") }) ||
		!slices.ContainsFunc(users, func(s string) bool { return strings.HasPrefix(s, "HARD ROUND TIMEOUT") }) {
		t.Errorf("second request's user messages %q lack the wrap-ups", users)
	}
	for _, r := range reqs[1:] {
		if names := toolNames(r); !slices.Equal(names, []string{coord.ToolNewAnswer}) {
			t.Errorf("after the hard limit: tools %v, want only new_answer", names)
		}
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if last.Role != llm.RoleTool || !strings.Contains(last.Content, `HARD ROUND TIMEOUT: tool "add" is blocked`) {
		t.Errorf("the blocked call's result: %+v", last)
	}
}

// submit_checklist is offered with the answers under checklist-gated
// voting; its call is judged as a step of the turn (the turn goes on to
// its action) and its verdict is the tool's result.
func TestChecklistCallIsAJudgedStepOfTheTurn(t *testing.T) {
	m := script(
		reply{calls: []llm.ToolCall{call("k1", coord.ToolChecklist, `{"scores": {"agent1": {"E1": 9}, "agent2": {"E1": 4}}}`)}},
		reply{calls: []llm.ToolCall{call("v1", coord.ToolVote, `{"agent_id":"agent1","reason":"passes"}`)}},
	)
	j := &judge{verdicts: []coord.Verdict{{Outcome: coord.Accepted, Message: "Checklist accepted. Verdict: vote for agent1."}}}
	turn := newTurn(m, j, twoAnswers, 2)
	turn.Checklist = true
	res := turn.Run(t.Context())
	if res.Err != nil || res.Action.Kind != coord.ActVote {
		t.Fatalf("result %+v, want the vote accepted", res)
	}
	if len(j.calls) != 2 || j.calls[0].Act.Kind != coord.ActChecklist || j.calls[0].Seen != 2 ||
		j.calls[0].Act.Content != `{"agent1": {"E1": 9}, "agent2": {"E1": 4}}` {
		t.Fatalf("judged %+v, want the scores, then the vote", j.calls)
	}
	reqs := m.requests()
	if !slices.Contains(toolNames(reqs[0]), coord.ToolChecklist) {
		t.Errorf("tools %v lack submit_checklist", toolNames(reqs[0]))
	}
	if got := reqs[1].Messages[len(reqs[1].Messages)-1].Content; got != "Checklist accepted. Verdict: vote for agent1." {
		t.Errorf("checklist result the model read: %q", got)
	}
}
