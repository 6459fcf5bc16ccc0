package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// The Responses API, end to end with openai-go's Responses client.

func askResponses(model, question string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(question)}}
}

func TestResponsesNonStreaming(t *testing.T) {
	f := start(t, setup{})
	resp, err := f.client.Responses.New(ctx10(t), askResponses("massgen", "What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != "completed" || !strings.HasPrefix(resp.ID, "resp_") || resp.Model != "massgen" {
		t.Errorf("response: status %q id %q model %q", resp.Status, resp.ID, resp.Model)
	}
	if !strings.Contains(resp.OutputText(), "Final answer") {
		t.Errorf("output text = %q, want the winner's presentation", resp.OutputText())
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
		t.Errorf("usage = %+v", resp.Usage)
	}
	ext := massgenExt(t, resp.RawJSON())
	if ext.RunID == "" || ext.Winner == "" || ext.Status != "completed" || "resp_"+ext.RunID != resp.ID {
		t.Errorf("massgen object = %+v", ext)
	}
}

func TestResponsesStreaming(t *testing.T) {
	f := start(t, setup{})
	st := f.client.Responses.NewStreaming(ctx10(t), askResponses("massgen", "What is the capital of France?"))
	defer st.Close()
	var types []string
	var text, progress strings.Builder
	var completed responses.Response
	seq := int64(-1)
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		if ev.SequenceNumber != seq+1 {
			t.Errorf("event %s has sequence_number %d after %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq = ev.SequenceNumber
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.reasoning_summary_text.delta":
			progress.WriteString(ev.Delta)
		case "response.completed":
			completed = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(types) < 4 || types[0] != "response.created" || types[1] != "response.in_progress" || types[len(types)-1] != "response.completed" {
		t.Fatalf("event types %v", types)
	}
	if completed.Status != "completed" || completed.OutputText() != text.String() || !strings.Contains(text.String(), "Final answer") {
		t.Errorf("streamed text %q, completed response %q (%s)", text.String(), completed.OutputText(), completed.Status)
	}
	for _, want := range []string{"[massgen] run started", "answered", "voted for", "winner"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	// The output lists the reasoning item (progress) before the message.
	if n := len(completed.Output); n < 2 || completed.Output[0].Type != "reasoning" || completed.Output[n-1].Type != "message" {
		t.Errorf("output items: %s", completed.RawJSON())
	}
}

func TestResponsesClientToolCall(t *testing.T) {
	f := start(t, setup{configs: map[string]string{
		"weather.yaml":           "agent:\n  id: solo\n  backend: {type: sim, model: sim-w, scenario: scenarios/weather.yaml}\n",
		"scenarios/weather.yaml": weatherScenario,
	}})
	p := askResponses("massgen/weather", "What should I wear in Paris today?")
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
		map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)}
	resp, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(err)
	}
	var calls []responses.ResponseOutputItemUnion
	for _, it := range resp.Output {
		if it.Type == "function_call" {
			calls = append(calls, it)
		}
	}
	if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Arguments.OfString != `{"city":"Paris"}` || calls[0].CallID == "" {
		t.Fatalf("output = %s", resp.RawJSON())
	}

	// Streamed, the call arrives as a function_call item with its arguments.
	st := f.client.Responses.NewStreaming(ctx10(t), p)
	defer st.Close()
	var args string
	for st.Next() {
		if ev := st.Current(); ev.Type == "response.function_call_arguments.done" {
			args = ev.Arguments
		}
	}
	if err := st.Err(); err != nil || args != `{"city":"Paris"}` {
		t.Errorf("streamed arguments %q, err %v", args, err)
	}
}

// A conversation sent as input items: instructions, earlier turns, and the
// output of the tool the previous response asked for all reach the agents.
func TestResponsesConversationInput(t *testing.T) {
	sim, url := simtest.Start(t, "")
	f := start(t, setup{configs: map[string]string{
		"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}})
	p := responses.ResponseNewParams{Model: "massgen/team", Instructions: param.NewOpt("Answer in French."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("My name is Ada.", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfMessage("Hello Ada!", responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt("call_1"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt("18°C, sunny")}}},
		}}}
	if _, err := f.client.Responses.New(ctx10(t), p); err != nil {
		t.Fatal(err)
	}
	var all string
	for _, r := range sim.Requests() {
		for _, m := range r.Messages {
			all += m.Content + "\n"
		}
	}
	for _, want := range []string{"My name is Ada.", "Hello Ada!", "Answer in French.", "What is the weather in Paris?", "get_weather", "18°C, sunny"} {
		if !strings.Contains(all, want) {
			t.Errorf("the agents never saw %q", want)
		}
	}
}

func TestResponsesErrors(t *testing.T) {
	f := start(t, setup{})
	code := func(err error) (int, string, string) {
		e, ok := errors.AsType[*openai.Error](err)
		if !ok {
			return 0, "", ""
		}
		return e.StatusCode, e.Code, e.Param
	}
	p := askResponses("massgen", "q")
	p.PreviousResponseID = param.NewOpt("resp_123")
	_, err := f.client.Responses.New(ctx10(t), p)
	if s, c, prm := code(err); s != 400 || c != "previous_response_not_found" || prm != "previous_response_id" {
		t.Errorf("previous_response_id: %v", err)
	}
	p = askResponses("massgen", "q")
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("vote", map[string]any{"type": "object"}, false)}
	_, err = f.client.Responses.New(ctx10(t), p)
	if s, c, _ := code(err); s != 400 || c != "tool_name_collision" {
		t.Errorf("colliding tool: %v", err)
	}
	if _, err := f.client.Responses.New(ctx10(t), askResponses("massgen/nope", "q")); statusOf(err) != 404 {
		t.Errorf("unknown model: %v", err)
	}
}

// A run in which every agent fails ends the stream with response.failed
// and an error event, which the SDK raises.
func TestResponsesStreamOfAFailedRun(t *testing.T) {
	_, url := simtest.Start(t, "models:\n  bad: {always: {fault: \"401\"}}\n")
	f := start(t, setup{configs: map[string]string{
		"bad.yaml": "agent: {id: a, backend: {type: chatcompletion, model: bad, base_url: " + url + "}}\n"}})
	st := f.client.Responses.NewStreaming(ctx10(t), askResponses("massgen/bad", "q"))
	defer st.Close()
	var failed bool
	for st.Next() {
		if st.Current().Type == "response.failed" {
			failed = st.Current().Response.Status == "failed" && st.Current().Response.Error.Message != ""
		}
	}
	if !failed || st.Err() == nil || !strings.Contains(st.Err().Error(), "401") {
		t.Errorf("response.failed seen: %v; stream error: %v", failed, st.Err())
	}
}
