package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// toolCallRecord is one OnTool notification.
type toolCallRecord struct {
	Name, Args string
	Result     tool.Result
}

// withTools gives turn the tools and records what OnTool hears.
func withTools(turn *llmTurn, s *tool.Set) *[]toolCallRecord {
	var got []toolCallRecord
	turn.Tools = s
	turn.OnTool = func(c llm.ToolCall, res tool.Result, _ time.Duration) {
		got = append(got, toolCallRecord{c.Name, c.Arguments, res})
	}
	return &got
}

// toolResults returns the RoleTool messages at the end of req, by call id.
func toolResults(req llm.Request) map[string]llm.Message {
	out := map[string]llm.Message{}
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == llm.RoleTool; i-- {
		out[req.Messages[i].ToolCallID] = req.Messages[i]
	}
	return out
}

func TestToolStepsRunBeforeTheWorkflowActionAndTheirResultsGoBack(t *testing.T) {
	m := script(
		reply{text: "Let me compute.", calls: []llm.ToolCall{call("t1", "add", `{"a":2,"b":3}`)}, usage: llm.Usage{InputTokens: 10, OutputTokens: 2}},
		reply{calls: []llm.ToolCall{call("t2", "add", `{"a":5,"b":1}`), call("t3", "lookup", `{"country":"France"}`)},
			usage: llm.Usage{InputTokens: 20, OutputTokens: 3}},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"6, and Paris."}`)}, usage: llm.Usage{InputTokens: 30, OutputTokens: 4}},
	)
	j := &judge{}
	turn := newTurn(m, j, nil, 0)
	heard := withTools(turn, tooltest.Set())
	res := turn.Run(t.Context())

	if res.Err != nil || res.Verdict.Outcome != coord.Accepted || res.Action.Content != "6, and Paris." {
		t.Fatalf("Result = %+v, want the answer accepted", res)
	}
	if res.Steps != 2 || res.Attempts != 1 {
		t.Errorf("steps = %d, attempts = %d; want 2 tool steps and 1 attempt", res.Steps, res.Attempts)
	}
	if want := (llm.Usage{InputTokens: 60, OutputTokens: 9}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v summed over every step", res.Usage, want)
	}
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if diff := cmp.Diff([]string{"new_answer", "add", "lookup"}, toolNames(reqs[0])); diff != "" {
		t.Errorf("tools offered (-want +got):\n%s", diff)
	}
	wantSecond := []llm.Message{
		{Role: llm.RoleAssistant, Content: "Let me compute.", ToolCalls: []llm.ToolCall{call("t1", "add", `{"a":2,"b":3}`)}},
		{Role: llm.RoleTool, ToolCallID: "t1", Content: "5"},
	}
	if diff := cmp.Diff(wantSecond, reqs[1].Messages[2:]); diff != "" {
		t.Errorf("second request after the prompt (-want +got):\n%s", diff)
	}
	third := toolResults(reqs[2])
	if third["t2"].Content != "6" || third["t3"].Content != "The capital of France is Paris." || len(third) != 2 {
		t.Errorf("third request's tool results = %+v", third)
	}
	if len(reqs[2].Messages) != 7 {
		t.Errorf("third request has %d messages, want 7 (system, user, 2 × assistant + results)", len(reqs[2].Messages))
	}
	want := []toolCallRecord{
		{"add", `{"a":2,"b":3}`, tool.Result{Content: "5"}},
		{"add", `{"a":5,"b":1}`, tool.Result{Content: "6"}},
		{"lookup", `{"country":"France"}`, tool.Result{Content: "The capital of France is Paris."}},
	}
	if diff := cmp.Diff(want, *heard); diff != "" {
		t.Errorf("OnTool (-want +got):\n%s", diff)
	}
}

func TestToolErrorsAndPanicsBecomeErrorResults(t *testing.T) {
	boom := tool.Func(llm.ToolDef{Name: "boom"}, func(context.Context, json.RawMessage) (string, error) {
		panic("index out of range")
	})
	s, err := tool.NewSet(boom, tooltest.Lookup())
	if err != nil {
		t.Fatal(err)
	}
	m := script(
		reply{calls: []llm.ToolCall{call("t1", "boom", `{}`), call("t2", "lookup", `{"country":"Atlantis"}`), call("t3", "search", `{}`)}},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"I could not find out."}`)}},
	)
	turn := newTurn(m, &judge{}, nil, 0)
	heard := withTools(turn, s)
	res := turn.Run(t.Context())
	if res.Err != nil || res.Verdict.Outcome != coord.Accepted {
		t.Fatalf("Result = %+v, want the turn to go on and end accepted", res)
	}
	got := toolResults(m.requests()[1])
	for id, want := range map[string]string{
		"t1": "Error: tool boom failed: panic: index out of range",
		"t2": `Error: no capital known for "Atlantis"`,
		"t3": `Error: tool "search" is not available here. Available tools: new_answer, boom, lookup.`,
	} {
		if got[id].Content != want || !got[id].IsError {
			t.Errorf("result of %s = %+v, want error %q", id, got[id], want)
		}
	}
	if len(*heard) != 2 || !(*heard)[0].Result.IsError || !(*heard)[1].Result.IsError {
		t.Errorf("OnTool heard %+v, want the two failed calls of existing tools", *heard)
	}
}

func TestTooManyToolStepsFailTheTurn(t *testing.T) {
	var rs []reply
	for range 4 {
		rs = append(rs, reply{calls: []llm.ToolCall{call("t", "add", `{"a":1,"b":1}`)}, usage: llm.Usage{InputTokens: 1, OutputTokens: 1}})
	}
	m := script(rs...)
	turn := newTurn(m, &judge{}, nil, 0)
	heard := withTools(turn, tooltest.Set())
	turn.MaxToolSteps = 3
	res := turn.Run(t.Context())
	if res.Err == nil || !strings.Contains(res.Err.Error(), "tool step limit reached") || !strings.Contains(res.Err.Error(), "limit 3") {
		t.Fatalf("Err = %v, want the tool step limit", res.Err)
	}
	if res.Steps != 3 || len(*heard) != 3 || len(m.requests()) != 4 {
		t.Errorf("steps = %d, tools run = %d, requests = %d; want 3, 3, 4 (the 4th response's tools never run)", res.Steps, len(*heard), len(m.requests()))
	}
	if res.Usage != (llm.Usage{InputTokens: 4, OutputTokens: 4}) {
		t.Errorf("usage = %+v, want all 4 requests counted", res.Usage)
	}
}

func TestTheDefaultToolStepLimitApplies(t *testing.T) {
	var rs []reply
	for range MaxToolSteps + 1 {
		rs = append(rs, reply{calls: []llm.ToolCall{call("t", "add", `{"a":1,"b":1}`)}})
	}
	m := script(rs...)
	turn := newTurn(m, &judge{}, nil, 0)
	turn.Tools = tooltest.Set()
	if res := turn.Run(t.Context()); res.Err == nil || res.Steps != MaxToolSteps {
		t.Errorf("Result = %+v, want a failure after %d steps", res, MaxToolSteps)
	}
}

// barrier is a tool whose calls each wait until n calls are in flight at
// once, which only parallel calls can achieve.
func barrier(n int) tool.Tool {
	var mu sync.Mutex
	inFlight := 0
	all := make(chan struct{})
	return tool.Func(llm.ToolDef{Name: "wait"}, func(ctx context.Context, _ json.RawMessage) (string, error) {
		mu.Lock()
		inFlight++
		if inFlight == n {
			close(all)
		}
		mu.Unlock()
		// The bound only turns a sequential (wrong) implementation into a
		// failure instead of a hang; a correct one never comes near it.
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		select {
		case <-all:
			return "together", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}

func TestCallsOfOneResponseRunInParallel(t *testing.T) {
	s, err := tool.NewSet(barrier(3))
	if err != nil {
		t.Fatal(err)
	}
	m := script(
		reply{calls: []llm.ToolCall{call("w1", "wait", `{}`), call("w2", "wait", `{}`), call("w3", "wait", `{}`)}},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"done"}`)}},
	)
	turn := newTurn(m, &judge{}, nil, 0)
	turn.Tools = s
	if res := turn.Run(t.Context()); res.Err != nil {
		t.Fatal(res.Err)
	}
	got := toolResults(m.requests()[1])
	for _, id := range []string{"w1", "w2", "w3"} {
		if got[id].Content != "together" {
			t.Errorf("result of %s = %+v, want all three calls in flight at once", id, got[id])
		}
	}
	// Results go back in call order, whatever order the calls finished in.
	msgs := m.requests()[1].Messages
	var order []string
	for _, msg := range msgs[len(msgs)-3:] {
		order = append(order, msg.ToolCallID)
	}
	if diff := cmp.Diff([]string{"w1", "w2", "w3"}, order); diff != "" {
		t.Errorf("result order (-want +got):\n%s", diff)
	}
}

func TestToolsAndAWorkflowCallInOneResponseRunTheToolsFirst(t *testing.T) {
	var order []string
	j := &judge{}
	m := script(reply{calls: []llm.ToolCall{
		call("c1", "new_answer", `{"content":"Paris."}`),
		call("t1", "lookup", `{"country":"France"}`),
	}})
	turn := newTurn(m, j, nil, 0)
	turn.Tools = tooltest.Set()
	turn.OnTool = func(c llm.ToolCall, _ tool.Result, _ time.Duration) { order = append(order, "tool "+c.Name) }
	turn.Judge = func(seen int, act coord.Action) coord.Verdict {
		order = append(order, "judge")
		return j.fn(seen, act)
	}
	res := turn.Run(t.Context())
	if res.Err != nil || res.Verdict.Outcome != coord.Accepted || res.Steps != 1 || res.Attempts != 1 {
		t.Fatalf("Result = %+v, want one step, one accepted attempt", res)
	}
	if diff := cmp.Diff([]string{"tool lookup", "judge"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestARejectedWorkflowCallNextToToolsKeepsTheToolResults(t *testing.T) {
	j := &judge{verdicts: []coord.Verdict{{Outcome: coord.Rejected, Message: "Answer too close to agent1."}}}
	m := script(
		reply{calls: []llm.ToolCall{call("t1", "lookup", `{"country":"Italy"}`), call("c1", "new_answer", `{"content":"Paris."}`)}},
		reply{calls: []llm.ToolCall{call("c2", "vote", `{"agent_id":"agent1","reason":"same"}`)}},
	)
	turn := newTurn(m, j, twoAnswers, 2)
	turn.Tools = tooltest.Set()
	var rejected []string
	turn.OnReject = func(r string) { rejected = append(rejected, r) }
	res := turn.Run(t.Context())
	if res.Err != nil || res.Attempts != 2 || res.Action.Kind != coord.ActVote {
		t.Fatalf("Result = %+v, want the vote accepted on attempt 2", res)
	}
	got := toolResults(m.requests()[1])
	if got["t1"].Content != "The capital of Italy is Rome." || got["t1"].IsError {
		t.Errorf("tool result = %+v", got["t1"])
	}
	if got["c1"].Content != "Error: Answer too close to agent1." || !got["c1"].IsError {
		t.Errorf("workflow result = %+v", got["c1"])
	}
	if diff := cmp.Diff([]string{"Answer too close to agent1."}, rejected); diff != "" {
		t.Errorf("OnReject (-want +got):\n%s", diff)
	}
}

func TestAToolNamedLikeAWorkflowToolFailsTheTurn(t *testing.T) {
	fake := tool.Func(llm.ToolDef{Name: coord.ToolVote}, func(context.Context, json.RawMessage) (string, error) { return "", nil })
	s, err := tool.NewSet(fake)
	if err != nil {
		t.Fatal(err)
	}
	m := script()
	turn := newTurn(m, &judge{}, twoAnswers, 2)
	turn.Tools = s
	res := turn.Run(t.Context())
	if res.Err == nil || !strings.Contains(res.Err.Error(), `two tools are named "vote"`) || len(m.requests()) != 0 {
		t.Errorf("Result = %+v after %d requests, want a collision error before any request", res, len(m.requests()))
	}
}

func TestInjectedAnswersArriveAfterEachToolStep(t *testing.T) {
	updates := NewInbox()
	newer := append(append([]coord.Answer{}, twoAnswers...), coord.Answer{Label: "agent3", Agent: "c", Content: "Rome.", Rev: 1})
	var once sync.Once
	slow := tool.Func(llm.ToolDef{Name: "think"}, func(context.Context, json.RawMessage) (string, error) {
		// Another agent's answer lands while this tool runs.
		once.Do(func() { updates.Post(Update{Epoch: 3, Answers: newer}) })
		return "thought", nil
	})
	s, err := tool.NewSet(slow)
	if err != nil {
		t.Fatal(err)
	}
	m := script(
		reply{calls: []llm.ToolCall{call("t1", "think", `{}`)}},
		reply{calls: []llm.ToolCall{call("c1", "vote", `{"agent_id":"agent3","reason":"newest"}`)}},
	)
	j := &judge{}
	turn := newTurn(m, j, twoAnswers, 2)
	turn.Tools = s
	turn.Updates = updates
	res := turn.Run(t.Context())
	if res.Err != nil || res.Verdict.Outcome != coord.Accepted {
		t.Fatalf("Result = %+v", res)
	}
	reqs := m.requests()
	msgs := reqs[1].Messages
	n := len(msgs)
	if msgs[n-2].Role != llm.RoleTool || msgs[n-2].ToolCallID != "t1" {
		t.Errorf("the tool result must come right after its call, before the update: %+v", msgs[n-2])
	}
	if msgs[n-1].Role != llm.RoleUser || msgs[n-1].Content != UpdateMessage(newer) {
		t.Errorf("second request ends with %+v, want the update message", msgs[n-1])
	}
	if diff := cmp.Diff([]string{"agent1", "agent2"}, voteEnum(t, reqs[0])); diff != "" {
		t.Errorf("first vote enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"agent1", "agent2", "agent3"}, voteEnum(t, reqs[1])); diff != "" {
		t.Errorf("vote enum after the tool step (-want +got):\n%s", diff)
	}
	if len(j.calls) != 1 || j.calls[0].Seen != 3 {
		t.Errorf("Judge calls = %+v, want seen = 3", j.calls)
	}
}
