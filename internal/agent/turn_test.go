package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// judgeCall is one call of llmTurn.Judge.
type judgeCall struct {
	Seen int
	Act  coord.Action
}

// judge answers llmTurn.Judge with scripted verdicts (Accepted once they run
// out) and records what it was asked.
type judge struct {
	verdicts []coord.Verdict
	calls    []judgeCall
}

func (j *judge) fn(seen int, act coord.Action) coord.Verdict {
	j.calls = append(j.calls, judgeCall{seen, act})
	if n := len(j.calls); n <= len(j.verdicts) {
		return j.verdicts[n-1]
	}
	return coord.Verdict{Outcome: coord.Accepted}
}

var twoAnswers = []coord.Answer{
	{Label: "agent1", Agent: "a", Content: "Paris.", Rev: 1},
	{Label: "agent2", Agent: "b", Content: "Paris, on the Seine.", Rev: 1},
}

// newTurn returns a turn on m that sees answers at epoch, judged by j.
func newTurn(m llm.Model, j *judge, answers []coord.Answer, epoch int) *llmTurn {
	return &llmTurn{
		Model:   m,
		Request: llm.Request{Model: "fake-1", Params: map[string]any{"temperature": 0.2}},
		System:  "SYSTEM PROMPT",
		User:    "USER MESSAGE",
		Answers: answers,
		Epoch:   epoch,
		Judge:   j.fn,
	}
}

func toolNames(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// voteEnum returns the agent_id enum of the vote tool offered in req.
func voteEnum(t *testing.T, req llm.Request) []string {
	t.Helper()
	for _, td := range req.Tools {
		if td.Name != coord.ToolVote {
			continue
		}
		props, _ := td.Parameters["properties"].(map[string]any)
		id, _ := props["agent_id"].(map[string]any)
		enum, ok := id["enum"].([]string)
		if !ok {
			t.Fatalf("vote tool has no []string agent_id enum: %#v", td.Parameters)
		}
		return enum
	}
	return nil
}

func TestValidNewAnswerOnTheFirstResponseIsJudgedOnceAndReturned(t *testing.T) {
	m := script(reply{text: "Let me answer.", calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"Paris is the capital."}`)},
		usage: llm.Usage{InputTokens: 100, OutputTokens: 20}})
	j := &judge{verdicts: []coord.Verdict{{Outcome: coord.Accepted, Label: "agent1"}}}
	turn := newTurn(m, j, nil, 0)
	res := turn.Run(t.Context())

	if res.Err != nil {
		t.Fatalf("Err = %v", res.Err)
	}
	want := []judgeCall{{Seen: 0, Act: coord.Action{Kind: coord.ActNewAnswer, Content: "Paris is the capital."}}}
	if diff := cmp.Diff(want, j.calls); diff != "" {
		t.Errorf("Judge calls (-want +got):\n%s", diff)
	}
	if res.Verdict.Outcome != coord.Accepted || res.Verdict.Label != "agent1" || res.Action != want[0].Act {
		t.Errorf("Result = %+v, want the accepted verdict and the action", res)
	}
	if res.Attempts != 1 || len(m.requests()) != 1 {
		t.Errorf("attempts = %d, requests = %d; want 1 and 1", res.Attempts, len(m.requests()))
	}
	if res.Usage != (llm.Usage{InputTokens: 100, OutputTokens: 20}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	req := m.requests()[0]
	wantMsgs := []llm.Message{{Role: llm.RoleSystem, Content: "SYSTEM PROMPT"}, {Role: llm.RoleUser, Content: "USER MESSAGE"}}
	if diff := cmp.Diff(wantMsgs, req.Messages); diff != "" {
		t.Errorf("first request messages (-want +got):\n%s", diff)
	}
	if req.Model != "fake-1" || req.Params["temperature"] != 0.2 {
		t.Errorf("request lost the model or params: model=%q params=%v", req.Model, req.Params)
	}
}

func TestNewAnswerWithoutContentUsesTheResponseText(t *testing.T) {
	m := script(reply{text: "The answer is Paris.", calls: []llm.ToolCall{call("c1", "new_answer", `{}`)}})
	j := &judge{}
	newTurn(m, j, nil, 0).Run(t.Context())
	if len(j.calls) != 1 || j.calls[0].Act.Content != "The answer is Paris." {
		t.Errorf("judged %+v, want new_answer with the response text", j.calls)
	}
}

func TestVoteToolIsOfferedOnlyWhenAnswersExist(t *testing.T) {
	tests := []struct {
		name      string
		answers   []coord.Answer
		wantTools []string
		wantEnum  []string
	}{
		{"no answers: new_answer only", nil, []string{"new_answer"}, nil},
		{"one answer", twoAnswers[:1], []string{"new_answer", "vote"}, []string{"agent1"}},
		{"two answers: enum lists exactly their labels", twoAnswers, []string{"new_answer", "vote"}, []string{"agent1", "agent2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := script(reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"x"}`)}})
			newTurn(m, &judge{}, tt.answers, len(tt.answers)).Run(t.Context())
			req := m.requests()[0]
			if diff := cmp.Diff(tt.wantTools, toolNames(req)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEnum, voteEnum(t, req)); diff != "" {
				t.Errorf("vote enum (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVoteIsJudgedWithItsLabelReasonAndTheEpochSeen(t *testing.T) {
	m := script(reply{calls: []llm.ToolCall{call("c1", "vote", `{"agent_id":" agent2 ","reason":"more complete"}`)}})
	j := &judge{}
	res := newTurn(m, j, twoAnswers, 7).Run(t.Context())
	want := []judgeCall{{Seen: 7, Act: coord.Action{Kind: coord.ActVote, Label: "agent2", Reason: "more complete"}}}
	if diff := cmp.Diff(want, j.calls); diff != "" {
		t.Errorf("Judge calls (-want +got):\n%s", diff)
	}
	if res.Err != nil || res.Action.Kind != coord.ActVote {
		t.Errorf("Result = %+v", res)
	}
}

func TestResponseWithoutToolCallGetsTheEnforcementMessageAsAUserMessage(t *testing.T) {
	m := script(
		reply{text: "I think the answer is Paris."},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"Paris."}`)}},
	)
	j := &judge{}
	var rejected []string
	turn := newTurn(m, j, nil, 0)
	turn.OnReject = func(r string) { rejected = append(rejected, r) }
	res := turn.Run(t.Context())

	if res.Err != nil || res.Attempts != 2 {
		t.Fatalf("Result = %+v, want accepted on attempt 2", res)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want := []llm.Message{
		{Role: llm.RoleSystem, Content: "SYSTEM PROMPT"},
		{Role: llm.RoleUser, Content: "USER MESSAGE"},
		{Role: llm.RoleAssistant, Content: "I think the answer is Paris."},
		{Role: llm.RoleUser, Content: coord.EnforcementMessage},
	}
	if diff := cmp.Diff(want, reqs[1].Messages); diff != "" {
		t.Errorf("second request messages (-want +got):\n%s", diff)
	}
	if len(j.calls) != 1 {
		t.Errorf("Judge called %d times, want once (the text-only response is not an action)", len(j.calls))
	}
	if diff := cmp.Diff([]string{coord.EnforcementMessage}, rejected); diff != "" {
		t.Errorf("OnReject (-want +got):\n%s", diff)
	}
}

func TestInvalidToolCallsGetOneToolResultEach(t *testing.T) {
	bad := []llm.ToolCall{
		call("call_bad", "new_answer", `{"content": "Paris`),
		call("call_other", "web_search", `{"q":"capital"}`),
	}
	m := script(
		reply{calls: bad},
		reply{calls: []llm.ToolCall{call("c2", "new_answer", `{"content":"Paris."}`)}},
	)
	j := &judge{}
	res := newTurn(m, j, nil, 0).Run(t.Context())
	if res.Err != nil || res.Attempts != 2 {
		t.Fatalf("Result = %+v, want accepted on attempt 2", res)
	}
	if len(j.calls) != 1 {
		t.Errorf("Judge called %d times, want once: a malformed call is not judged", len(j.calls))
	}
	msgs := m.requests()[1].Messages
	if len(msgs) != 5 {
		t.Fatalf("second request has %d messages, want 5 (system, user, assistant, 2 tool results): %+v", len(msgs), msgs)
	}
	if a := msgs[2]; a.Role != llm.RoleAssistant || !cmp.Equal(a.ToolCalls, bad) {
		t.Errorf("assistant message = %+v, want it to carry the calls %+v", a, bad)
	}
	first, second := msgs[3], msgs[4]
	if first.Role != llm.RoleTool || first.ToolCallID != "call_bad" || !strings.Contains(first.Content, "not valid JSON") {
		t.Errorf("first tool result = %+v, want role tool for call_bad with the JSON problem", first)
	}
	if second.Role != llm.RoleTool || second.ToolCallID != "call_other" {
		t.Errorf("second tool result = %+v, want role tool for call_other", second)
	}
	if strings.Contains(second.Content, "not valid JSON") || second.Content == "" {
		t.Errorf("second tool result = %q, want a short pointer to the first, not the reason again", second.Content)
	}
}

func TestRejectedVerdictIsSentBackAsAToolResultAndTheTurnRetries(t *testing.T) {
	capMsg := "You have reached the maximum of 5 new answers. Do not call new_answer again: call vote for the best existing answer."
	m := script(
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"A sixth answer."}`)}, usage: llm.Usage{InputTokens: 10, OutputTokens: 3}},
		reply{calls: []llm.ToolCall{call("c2", "vote", `{"agent_id":"agent1","reason":"fine"}`)}, usage: llm.Usage{InputTokens: 15, OutputTokens: 4}},
	)
	j := &judge{verdicts: []coord.Verdict{{Outcome: coord.Rejected, Message: capMsg}, {Outcome: coord.Accepted, Label: "agent1", Target: "a"}}}
	var rejected []string
	turn := newTurn(m, j, twoAnswers, 2)
	turn.OnReject = func(r string) { rejected = append(rejected, r) }
	res := turn.Run(t.Context())

	if res.Err != nil || res.Attempts != 2 || res.Verdict.Outcome != coord.Accepted || res.Action.Kind != coord.ActVote {
		t.Fatalf("Result = %+v, want the vote accepted on attempt 2", res)
	}
	if len(j.calls) != 2 {
		t.Errorf("Judge called %d times, want 2", len(j.calls))
	}
	msgs := m.requests()[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleTool || last.ToolCallID != "c1" || !strings.Contains(last.Content, capMsg) {
		t.Errorf("second request ends with %+v, want the cap message as the tool result of c1", last)
	}
	if diff := cmp.Diff([]string{capMsg}, rejected); diff != "" {
		t.Errorf("OnReject (-want +got):\n%s", diff)
	}
	if want := (llm.Usage{InputTokens: 25, OutputTokens: 7}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v summed over both attempts", res.Usage, want)
	}
}

func TestThreeInvalidResponsesFailTheTurnWithTheLastProblem(t *testing.T) {
	m := script(
		reply{text: "thinking", usage: llm.Usage{InputTokens: 1, OutputTokens: 1}},
		reply{calls: []llm.ToolCall{call("c2", "vote", `{}`), call("c3", "new_answer", `{"content":"x"}`)}, usage: llm.Usage{InputTokens: 2, OutputTokens: 2}},
		reply{calls: []llm.ToolCall{call("c4", "new_answer", `not json`)}, usage: llm.Usage{InputTokens: 4, OutputTokens: 4}},
		reply{calls: []llm.ToolCall{call("c5", "new_answer", `{"content":"never asked"}`)}},
	)
	j := &judge{}
	var rejected []string
	turn := newTurn(m, j, twoAnswers, 2)
	turn.OnReject = func(r string) { rejected = append(rejected, r) }
	res := turn.Run(t.Context())

	if res.Err == nil {
		t.Fatalf("Err = nil after %d invalid responses; Result = %+v", MaxAttempts, res)
	}
	if !strings.Contains(res.Err.Error(), "not valid JSON") {
		t.Errorf("Err = %q, want it to mention the last problem (invalid JSON)", res.Err)
	}
	if strings.Contains(res.Err.Error(), "both vote and new_answer") {
		t.Errorf("Err = %q mentions an earlier problem, not the last", res.Err)
	}
	if res.Attempts != MaxAttempts || len(m.requests()) != MaxAttempts {
		t.Errorf("attempts = %d, requests = %d; want %d each", res.Attempts, len(m.requests()), MaxAttempts)
	}
	if len(j.calls) != 0 {
		t.Errorf("Judge called %d times for invalid responses", len(j.calls))
	}
	if len(rejected) != MaxAttempts {
		t.Errorf("OnReject called %d times, want %d", len(rejected), MaxAttempts)
	}
	if want := (llm.Usage{InputTokens: 7, OutputTokens: 7}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}

func TestRejectedVerdictsCountTowardsTheAttemptLimit(t *testing.T) {
	ans := reply{calls: []llm.ToolCall{call("c", "new_answer", `{"content":"same"}`)}}
	m := script(ans, ans, ans, ans)
	rej := coord.Verdict{Outcome: coord.Rejected, Message: "This answer is identical to agent1's answer."}
	j := &judge{verdicts: []coord.Verdict{rej, rej, rej, rej}}
	res := newTurn(m, j, twoAnswers, 2).Run(t.Context())
	if res.Err == nil || !strings.Contains(res.Err.Error(), "identical to agent1") {
		t.Fatalf("Err = %v, want the turn to fail with the judge's last message", res.Err)
	}
	if len(j.calls) != MaxAttempts || len(m.requests()) != MaxAttempts {
		t.Errorf("judged %d, requested %d; want %d each", len(j.calls), len(m.requests()), MaxAttempts)
	}
}

func TestStaleVerdictEndsTheTurnWithoutError(t *testing.T) {
	m := script(
		reply{calls: []llm.ToolCall{call("c1", "vote", `{"agent_id":"agent1","reason":"ok"}`)}},
		reply{calls: []llm.ToolCall{call("c2", "vote", `{"agent_id":"agent1","reason":"ok"}`)}},
	)
	j := &judge{verdicts: []coord.Verdict{{Outcome: coord.Stale, Message: "this turn was superseded"}}}
	res := newTurn(m, j, twoAnswers, 2).Run(t.Context())
	if res.Err != nil {
		t.Errorf("Err = %v, want none for a stale verdict", res.Err)
	}
	if res.Verdict.Outcome != coord.Stale || res.Attempts != 1 || len(m.requests()) != 1 {
		t.Errorf("Result = %+v after %d requests, want stale after one", res, len(m.requests()))
	}
}

func TestModelErrorIsReturnedAsErr(t *testing.T) {
	provErr := &llm.Error{Provider: "fake", Status: 429, Retry: true, Message: "rate limited"}
	tests := []struct {
		name         string
		replies      []reply
		wantAttempts int
		wantUsage    llm.Usage
	}{
		{"on the first response", []reply{{text: "partial", err: provErr}}, 1, llm.Usage{}},
		{"after an invalid response", []reply{{text: "no tool", usage: llm.Usage{InputTokens: 5, OutputTokens: 2}}, {err: provErr}}, 2,
			llm.Usage{InputTokens: 5, OutputTokens: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := script(tt.replies...)
			j := &judge{}
			res := newTurn(m, j, nil, 0).Run(t.Context())
			var got *llm.Error
			if !errors.As(res.Err, &got) || got.Status != 429 {
				t.Fatalf("Err = %v, want the provider's *llm.Error", res.Err)
			}
			if len(j.calls) != 0 {
				t.Errorf("Judge called after a model error: %+v", j.calls)
			}
			if res.Attempts != tt.wantAttempts || res.Usage != tt.wantUsage {
				t.Errorf("attempts = %d usage = %+v; want %d, %+v", res.Attempts, res.Usage, tt.wantAttempts, tt.wantUsage)
			}
		})
	}
}

func TestCancelledContextEndsTheTurnWithItsError(t *testing.T) {
	m := script(reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"x"}`)}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	j := &judge{}
	res := newTurn(m, j, nil, 0).Run(ctx)
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("Err = %v, want context.Canceled", res.Err)
	}
	if len(j.calls) != 0 {
		t.Errorf("Judge called on a cancelled turn: %+v", j.calls)
	}
}

func TestUpdateDeliveredMidTurnIsShownBeforeTheNextRequest(t *testing.T) {
	updates := NewInbox()
	newer := []coord.Answer{
		twoAnswers[0], twoAnswers[1],
		{Label: "agent3", Agent: "c", Content: "Paris (pop. 2.1 million).", Rev: 1},
	}
	m := script(
		// While the first response streams, another agent answers.
		reply{text: "Comparing agent1 and agent2...", usage: llm.Usage{InputTokens: 50, OutputTokens: 10},
			during: func() { updates.Post(Update{Epoch: 3, Answers: newer}) }},
		reply{calls: []llm.ToolCall{call("c1", "vote", `{"agent_id":"agent3","reason":"has the population"}`)},
			usage: llm.Usage{InputTokens: 80, OutputTokens: 12}},
	)
	j := &judge{}
	turn := newTurn(m, j, twoAnswers, 2)
	turn.Updates = updates
	res := turn.Run(t.Context())

	if res.Err != nil || res.Verdict.Outcome != coord.Accepted {
		t.Fatalf("Result = %+v", res)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for _, msg := range reqs[0].Messages {
		if strings.HasPrefix(msg.Content, "UPDATE:") {
			t.Errorf("first request already carries an update: %q", msg.Content)
		}
	}
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || !strings.HasPrefix(last.Content, "UPDATE:") {
		t.Fatalf("second request ends with %+v, want a user message starting with UPDATE:", last)
	}
	for _, a := range newer {
		if !strings.Contains(last.Content, "<"+a.Label+"> "+a.Content) {
			t.Errorf("update message lacks %s's answer:\n%s", a.Label, last.Content)
		}
	}
	if diff := cmp.Diff([]string{"agent1", "agent2", "agent3"}, voteEnum(t, reqs[1])); diff != "" {
		t.Errorf("vote enum after the update (-want +got):\n%s", diff)
	}
	if len(j.calls) != 1 || j.calls[0].Seen != 3 {
		t.Errorf("Judge calls = %+v, want one with seen = 3 (the update's epoch)", j.calls)
	}
	if want := (llm.Usage{InputTokens: 130, OutputTokens: 22}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}

func TestNoUpdateLeavesTheSeenEpochAlone(t *testing.T) {
	updates := NewInbox() // inject policy, but nothing arrives
	m := script(reply{calls: []llm.ToolCall{call("c1", "vote", `{"agent_id":"agent1","reason":"ok"}`)}})
	j := &judge{}
	turn := newTurn(m, j, twoAnswers, 2)
	turn.Updates = updates
	turn.Run(t.Context())
	if len(j.calls) != 1 || j.calls[0].Seen != 2 {
		t.Errorf("Judge calls = %+v, want seen = 2", j.calls)
	}
	for _, msg := range m.requests()[0].Messages {
		if strings.HasPrefix(msg.Content, "UPDATE:") {
			t.Errorf("update message without an update: %q", msg.Content)
		}
	}
}

func TestStreamedTextAndReasoningReachTheEmitter(t *testing.T) {
	m := script(reply{reasoning: "hmm", text: "Answer: Paris", calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"Paris"}`)}})
	em := &recordingEmitter{}
	turn := newTurn(m, &judge{}, nil, 0)
	turn.Emit = em
	turn.Run(t.Context())
	if diff := cmp.Diff([]string{"Answer: Paris"}, em.text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hmm"}, em.reasoning); diff != "" {
		t.Errorf("reasoning (-want +got):\n%s", diff)
	}
}

// A tool's images travel with its result message, so the provider adapter
// can send them where its API takes images in a tool result.
func TestToolMessagesCarryImages(t *testing.T) {
	img := llm.Image{MIME: "image/png", Data: []byte("\x89PNG")}
	got := toolMessages(
		[]llm.ToolCall{{ID: "c1", Name: "shot"}, {ID: "c2", Name: "echo"}},
		[]tool.Result{{Content: "[image: image/png, 4 bytes]", Images: []llm.Image{img}}, {Content: "hi"}},
	)
	want := []llm.Message{
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "[image: image/png, 4 bytes]", Images: []llm.Image{img}},
		{Role: llm.RoleTool, ToolCallID: "c2", Content: "hi"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool messages (-want +got):\n%s", d)
	}
}
