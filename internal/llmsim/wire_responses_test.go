package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Schemas of the workflow tools, shared by the tests of every wire.
func newAnswerSchema() map[string]any {
	return map[string]any{"type": "object",
		"properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []string{"content"}}
}

func voteSchema(enum ...string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"agent_id": map[string]any{"type": "string", "enum": enum},
		"reason":   map[string]any{"type": "string"},
	}}
}

// severalCalls scripts one response with text and three tool calls.
const severalCalls = `
models:
  m:
    steps:
      - text: "Doing both."
        calls:
          - {name: vote, arguments: '{"agent_id":"agent1","reason":"good"}'}
          - {name: new_answer, arguments: '{"content":"better"}'}
          - {name: submit}
`

var wantSeveral = [][2]string{{"vote", `{"agent_id":"agent1","reason":"good"}`}, {"new_answer", `{"content":"better"}`}, {"submit", `{}`}}

const taskMessage = "<ORIGINAL MESSAGE> What is the capital of France? <END OF ORIGINAL MESSAGE>"

// responsesService is the Responses API of the official SDK, built without
// reading OPENAI_* variables from the environment.
func responsesService(f *fixture) responses.ResponseService {
	return responses.NewResponseService(option.WithBaseURL(f.base), option.WithAPIKey("sim"),
		option.WithMaxRetries(0), option.WithHTTPClient(f.hc))
}

func respParams(model, user string, tools ...responses.ToolUnionParam) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        model,
		Instructions: openai.String("You are a test."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(user)},
		Tools:        tools,
	}
}

func respTool(name string, schema map[string]any) responses.ToolUnionParam {
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return responses.ToolParamOfFunction(name, schema, false)
}

// respStream is a Responses stream consumed through the SDK.
type respStream struct {
	types     []string
	text      strings.Builder // output_text deltas
	args      map[string]string
	completed *responses.Response
	err       error
}

func runResponses(ctx context.Context, f *fixture, p responses.ResponseNewParams) *respStream {
	svc := responsesService(f)
	st := svc.NewStreaming(ctx, p)
	defer st.Close()
	r := &respStream{args: map[string]string{}}
	for st.Next() {
		ev := st.Current()
		r.types = append(r.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			r.text.WriteString(ev.Delta)
		case "response.function_call_arguments.delta":
			r.args[ev.ItemID] += ev.Delta
		case "response.completed":
			resp := ev.Response
			r.completed = &resp
		}
	}
	r.err = st.Err()
	return r
}

func respCalls(t *testing.T, resp *responses.Response) [][2]string {
	t.Helper()
	var out [][2]string
	for _, it := range resp.Output {
		if it.Type == "function_call" {
			fc := it.AsFunctionCall()
			out = append(out, [2]string{fc.Name, fc.Arguments})
		}
	}
	return out
}

func TestResponsesStreamingText(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {final: "The final answer is forty-two, as computed by the simulator."}}`))
	r := runResponses(testCtx(t), f, respParams("m", "What is six times seven?"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	const want = "The final answer is forty-two, as computed by the simulator."
	if r.text.String() != want || r.completed == nil || r.completed.OutputText() != want {
		t.Fatalf("text %q, completed %+v", r.text.String(), r.completed)
	}
	wantTypes := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	var got []string
	for _, ty := range r.types {
		if len(got) == 0 || got[len(got)-1] != ty {
			got = append(got, ty)
		}
	}
	if strings.Join(got, " ") != strings.Join(wantTypes, " ") {
		t.Errorf("events %v", got)
	}
	rec := lastRecord(t, f)
	u := r.completed.Usage
	if rec.Wire != WireResponses || rec.Step != "text" || rec.Outcome != OutcomeCompleted || !rec.Stream ||
		int(u.OutputTokens) != rec.OutputTokens || rec.OutputTokens != countTokens(want) ||
		int(u.InputTokens) != rec.PromptTokens || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("record %+v, usage %+v", rec, u)
	}
	if len(rec.Messages) != 2 || rec.Messages[0].Role != "system" || rec.Messages[1].Content != "What is six times seven?" {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestResponsesNonStreaming(t *testing.T) {
	f := start(t, nil)
	svc := responsesService(f)
	ctx := testCtx(t)
	res, err := svc.New(ctx, respParams("plain", "Say hello"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.OutputText(), "[sim model plain] Final answer to: Say hello. ") || res.Status != "completed" ||
		res.ID != "resp_sim000001" || int(res.Usage.OutputTokens) != countTokens(res.OutputText()) {
		t.Errorf("response %+v", res)
	}
	// A tool call, non-streamed, with the conversation as input items.
	p := respParams("m", "", respTool("new_answer", newAnswerSchema()))
	call := responses.ResponseInputItemParamOfFunctionCall(`{"path":"x"}`, "call_1", "read_file")
	out := responses.ResponseInputItemParamOfFunctionCallOutput("file text")
	out.OfFunctionCallOutput.CallID = openai.String("call_1")
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage(taskMessage, responses.EasyInputMessageRoleUser), call, out}}
	res, err = svc.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	calls := respCalls(t, res)
	if len(calls) != 1 || calls[0][0] != "new_answer" || !strings.Contains(calls[0][1], "Answer 1 to: What is the capital of France?") {
		t.Errorf("calls %v", calls)
	}
	rec := lastRecord(t, f)
	if len(rec.Messages) != 4 || rec.Messages[2].Role != "assistant" || rec.Messages[2].ToolCalls[0] != "read_file" ||
		rec.Messages[3].Role != "tool" || rec.Messages[3].ToolCallID != "call_1" || rec.Messages[3].Content != "file text" {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestResponsesToolCalls(t *testing.T) {
	f := start(t, scenario(t, severalCalls))
	ctx := testCtx(t)
	// Several calls in one response, after text.
	r := runResponses(ctx, f, respParams("m", "task", respTool("new_answer", newAnswerSchema()), respTool("vote", voteSchema("agent1"))))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := respCalls(t, r.completed); len(got) != 3 || got[0] != wantSeveral[0] || got[1] != wantSeveral[1] || got[2] != wantSeveral[2] {
		t.Errorf("calls %v", got)
	}
	if r.text.String() != "Doing both." || r.args["fc_sim000001_1"] != `{"content":"better"}` {
		t.Errorf("text %q, argument deltas %v", r.text.String(), r.args)
	}
	if fc := r.completed.Output[1].AsFunctionCall(); fc.CallID != callID(1, 0) {
		t.Errorf("call_id %q", fc.CallID)
	}
	// Default policy: new_answer with valid JSON, then a vote for the first label.
	r = runResponses(ctx, f, respParams("m", taskMessage, respTool("new_answer", newAnswerSchema())))
	calls := respCalls(t, r.completed)
	var args struct{ Content string }
	if r.err != nil || len(calls) != 1 || calls[0][0] != "new_answer" || json.Unmarshal([]byte(calls[0][1]), &args) != nil ||
		!strings.HasPrefix(args.Content, "[sim model m] Answer 1 to: What is the capital of France?") {
		t.Fatalf("calls %v, %v", calls, r.err)
	}
	if len(r.args) != 1 || r.args["fc_sim000002_0"] != calls[0][1] {
		t.Errorf("argument deltas %v", r.args)
	}
	r = runResponses(ctx, f, respParams("m", "task", respTool("new_answer", newAnswerSchema()), respTool("vote", voteSchema("agent2", "agent1"))))
	if calls := respCalls(t, r.completed); len(calls) != 1 || calls[0][1] != `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}` {
		t.Errorf("vote %v", calls)
	}
	if rec := lastRecord(t, f); rec.Step != "vote" || strings.Join(rec.VoteEnum, ",") != "agent2,agent1" {
		t.Errorf("record %+v", rec)
	}
}

func TestResponsesFaults(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - {fault: "429", retry_after: 2}
      - {fault: cut}
      - {fault: malformed_tool_json}
      - {fault: no_tool_call}
  h: {always: {fault: hang}}
`))
	ctx := testCtx(t)
	tools := []responses.ToolUnionParam{respTool("new_answer", newAnswerSchema())}
	r := runResponses(ctx, f, respParams("m", "task", tools...))
	var apiErr *openai.Error
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" ||
		apiErr.Response.Header.Get("Retry-After") != "2" {
		t.Fatalf("429: %v", r.err)
	}
	r = runResponses(ctx, f, respParams("m", "task", tools...))
	if r.err == nil || r.completed != nil || len(r.types) < 3 {
		t.Errorf("cut: err %v, events %v", r.err, r.types)
	}
	if rec := lastRecord(t, f); rec.Step != "fault:cut" || rec.Outcome != OutcomeFault || rec.OutputTokens == 0 {
		t.Errorf("cut record %+v", rec)
	}
	r = runResponses(ctx, f, respParams("m", "task", tools...))
	if calls := respCalls(t, r.completed); r.err != nil || len(calls) != 1 || json.Valid([]byte(calls[0][1])) {
		t.Errorf("malformed: %v %v", calls, r.err)
	}
	r = runResponses(ctx, f, respParams("m", "task", tools...))
	if r.err != nil || len(respCalls(t, r.completed)) != 0 || !strings.Contains(r.completed.OutputText(), "plain text") {
		t.Errorf("no_tool_call: %q %v", r.completed.OutputText(), r.err)
	}

	// Hang, then the client cancels: the record says cancelled.
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	n := len(f.sim.Requests()) // counted before the request goes out
	go func() { done <- runResponses(hctx, f, respParams("h", "task", tools...)).err }()
	if err := f.sim.WaitFor(ctx, func(rs []Record) bool { return len(rs) > n && !rs[n].FirstByte.IsZero() }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("no error after cancel")
	}
	waitOutcome(t, f, n, OutcomeCancelled)
}

// waitOutcome waits for record n (0-based) to end with the outcome.
func waitOutcome(t *testing.T, f *fixture, n int, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.sim.WaitFor(ctx, func(rs []Record) bool { return rs[n].Outcome != "" }); err != nil {
		t.Fatal(err)
	}
	if rec := f.sim.Requests()[n]; rec.Outcome != want {
		t.Errorf("record %+v, want outcome %s", rec, want)
	}
}

// postResponses sends a raw Responses request (shapes the SDK does not
// build) and decodes the whole response.
func postResponses(t *testing.T, f *fixture, body string) (out []map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), "POST", f.base+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	return r.Output
}

// Codex offers an MCP server's tools as a namespace ("mcp__massgen") beside
// its functions, a hosted web_search and free-text custom tools; its
// calls name the namespace. The workflow tools are recognised under the
// namespaced name, called with the namespace, and a namespaced call in
// the history counts as the accepted action it is.
func TestResponsesNamespacedTools(t *testing.T) {
	f := start(t, nil)
	tools := `[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{}}},
	 {"type":"custom","name":"apply_patch","format":{"type":"grammar"}},
	 {"type":"namespace","name":"mcp__massgen","description":"workflow","tools":[
	   {"type":"function","name":"new_answer","parameters":{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}}]},
	 {"type":"web_search","external_web_access":false}]`
	out := postResponses(t, f, `{"model":"sim-codex","tools":`+tools+`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"What is the capital of France?"}]}]}`)
	if len(out) != 1 || out[0]["type"] != "function_call" || out[0]["name"] != "new_answer" || out[0]["namespace"] != "mcp__massgen" {
		t.Fatalf("output %v, want a call of new_answer in namespace mcp__massgen", out)
	}
	rec := lastRecord(t, f)
	if rec.Step != "answer" || !slices.Contains(rec.Tools, "mcp__massgen__new_answer") || !slices.Contains(rec.Tools, "exec_command") {
		t.Errorf("record: step %q tools %v", rec.Step, rec.Tools)
	}

	// The action's result comes back: a short text ends the CLI's turn.
	call, _ := json.Marshal(out[0])
	out = postResponses(t, f, `{"model":"sim-codex","tools":`+tools+`,"input":[{"type":"message","role":"user","content":"What is the capital of France?"},`+
		string(call)+`,{"type":"function_call_output","call_id":"`+out[0]["call_id"].(string)+`","output":"Answer recorded as agent1."}]}`)
	if len(out) != 1 || out[0]["type"] != "message" {
		t.Fatalf("after the action: %v, want text", out)
	}
	if rec := lastRecord(t, f); len(rec.Messages) < 2 || !slices.Equal(rec.Messages[1].ToolCalls, []string{"mcp__massgen__new_answer"}) {
		t.Errorf("history as recorded: %+v", rec.Messages)
	}
}
