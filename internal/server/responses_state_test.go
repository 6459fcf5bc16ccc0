package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// postJSON posts body to the fixture's path and returns the status and body.
func postJSON(t *testing.T, f *fixture, path, body string) (int, []byte) {
	t.Helper()
	resp, err := f.hc.Post(f.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// Kept responses: previous_response_id, item_reference, store: false.

// seen is every message text the simulator received since from.
func seen(sim *llmsim.Server, from int) string {
	var all strings.Builder
	for _, r := range sim.Requests()[from:] {
		for _, m := range r.Messages {
			all.WriteString(m.Content + "\n")
		}
	}
	return all.String()
}

func TestPreviousResponseIDContinuesTheConversation(t *testing.T) {
	sim, url := simtest.Start(t, "")
	f := start(t, setup{configs: map[string]string{
		"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}})
	p := askResponses("massgen/team", "My name is Ada.")
	p.Instructions = param.NewOpt("Answer in French.")
	first, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(err)
	}
	n := len(sim.Requests())
	p = askResponses("massgen/team", "What is my name?")
	p.PreviousResponseID = param.NewOpt(first.ID)
	second, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(apiErr(err))
	}
	all := seen(sim, n)
	for _, want := range []string{"My name is Ada.", first.OutputText(), "What is my name?"} {
		if !strings.Contains(all, want) {
			t.Errorf("the second run never saw %q:\n%s", want, all)
		}
	}
	if second.PreviousResponseID != first.ID {
		t.Errorf("previous_response_id echoed as %q", second.PreviousResponseID)
	}
	// A chain: the third sees the first two.
	n = len(sim.Requests())
	p = askResponses("massgen/team", "And again?")
	p.PreviousResponseID = param.NewOpt(second.ID)
	if _, err := f.client.Responses.New(ctx10(t), p); err != nil {
		t.Fatal(err)
	}
	if all := seen(sim, n); !strings.Contains(all, "My name is Ada.") || !strings.Contains(all, "What is my name?") {
		t.Errorf("the third run lost the start of the chain:\n%s", all)
	}
}

// The AI SDK's Responses model sends the items of earlier responses as
// item_reference: each stands for the kept item (a message, a function
// call, a reasoning item standing for nothing).
func TestItemReferenceResolvesKeptItems(t *testing.T) {
	sim, url := simtest.Start(t, weatherScenario)
	f := start(t, setup{configs: map[string]string{
		"weather.yaml": "agent: {id: solo, backend: {type: chatcompletion, model: sim-w, base_url: " + url + "}}\n"}})
	p := askResponses("massgen/weather", "What should I wear in Paris today?")
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
		map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)}
	// Streamed: its items are kept too.
	st := f.client.Responses.NewStreaming(ctx10(t), p)
	var first responses.Response
	for st.Next() {
		if ev := st.Current(); ev.Type == "response.completed" {
			first = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var call responses.ResponseOutputItemUnion
	var refs responses.ResponseInputParam
	refs = append(refs, responses.ResponseInputItemParamOfMessage("What should I wear in Paris today?", responses.EasyInputMessageRoleUser))
	for _, it := range first.Output {
		refs = append(refs, responses.ResponseInputItemParamOfItemReference(it.ID))
		if it.Type == "function_call" {
			call = it
		}
	}
	if call.CallID == "" {
		t.Fatalf("no function call in %s", first.RawJSON())
	}
	refs = append(refs, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
		CallID: param.NewOpt(call.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt("18°C, sunny")}}})
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: refs}
	n := len(sim.Requests())
	if _, err := f.client.Responses.New(ctx10(t), p); err != nil {
		t.Fatal(apiErr(err))
	}
	// The referenced call and the client's result reach the agents.
	all := seen(sim, n)
	for _, want := range []string{"What should I wear in Paris today?", `get_weather({"city":"Paris"})`, "get_weather returned: 18°C, sunny"} {
		if !strings.Contains(all, want) {
			t.Errorf("the second run never saw %q:\n%s", want, all)
		}
	}

	// An unknown item is 404, as OpenAI answers.
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfItemReference("msg_nope")}}
	_, err := f.client.Responses.New(ctx10(t), p)
	if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 404 || e.Code != "item_not_found" || !strings.Contains(e.Message, "msg_nope") {
		t.Errorf("unknown item: %v", err)
	}
}

func TestStoreFalseKeepsNothing(t *testing.T) {
	f := start(t, setup{})
	p := askResponses("massgen", "q")
	p.Store = param.NewOpt(false)
	resp, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.RawJSON(), `"store":false`) {
		t.Errorf("store: false not echoed: %s", resp.RawJSON())
	}
	p = askResponses("massgen", "q2")
	p.PreviousResponseID = param.NewOpt(resp.ID)
	_, err = f.client.Responses.New(ctx10(t), p)
	if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 400 || e.Code != "previous_response_not_found" {
		t.Errorf("a response made with store: false was kept: %v", err)
	}
	p = askResponses("massgen", "q3")
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfItemReference(resp.Output[len(resp.Output)-1].ID)}}
	if _, err = f.client.Responses.New(ctx10(t), p); statusOf(err) != http.StatusNotFound {
		t.Errorf("an item of a response made with store: false was kept: %v", apiErr(err))
	}
}

// The Response echoes what the request set, as OpenAI's does.
func TestResponseEchoesTheRequest(t *testing.T) {
	f := start(t, setup{})
	p := askResponses("massgen", "q")
	p.Instructions = param.NewOpt("Be brief.")
	p.Metadata = map[string]string{"ticket": "42"}
	p.Temperature = param.NewOpt(0.5)
	p.TopP = param.NewOpt(0.9)
	p.MaxOutputTokens = param.NewOpt[int64](300)
	p.ParallelToolCalls = param.NewOpt(false)
	p.Truncation = responses.ResponseNewParamsTruncationAuto
	p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsRequired)}
	p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("lookup", map[string]any{"type": "object"}, false)}
	for _, stream := range []bool{false, true} {
		var r responses.Response
		if stream {
			st := f.client.Responses.NewStreaming(ctx10(t), p)
			for st.Next() {
				if ev := st.Current(); ev.Type == "response.completed" {
					r = ev.Response
				}
			}
			if err := st.Err(); err != nil {
				t.Fatal(err)
			}
			st.Close()
		} else {
			rp, err := f.client.Responses.New(ctx10(t), p)
			if err != nil {
				t.Fatal(err)
			}
			r = *rp
		}
		if r.Instructions.OfString != "Be brief." || r.Metadata["ticket"] != "42" || r.Temperature != 0.5 || r.TopP != 0.9 ||
			r.MaxOutputTokens != 300 || r.ParallelToolCalls || r.Truncation != "auto" || r.ToolChoice.OfToolChoiceMode != "required" ||
			len(r.Tools) != 1 || r.Tools[0].Name != "lookup" || !strings.Contains(r.RawJSON(), `"store":true`) || r.Text.Format.Type != "text" {
			t.Errorf("stream %v: the response does not echo the request: %s", stream, r.RawJSON())
		}
	}
}

// A whole Response has the output items the stream had, in its
// response.completed event: the same types, ids and texts.
func TestStreamedAndWholeResponsesHaveTheSameItems(t *testing.T) {
	f := start(t, setup{})
	whole, err := f.client.Responses.New(ctx10(t), askResponses("massgen", "What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	st := f.client.Responses.NewStreaming(ctx10(t), askResponses("massgen", "What is the capital of France?"))
	defer st.Close()
	var streamed responses.Response
	for st.Next() {
		if ev := st.Current(); ev.Type == "response.completed" {
			streamed = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	shape := func(r responses.Response) []string {
		var out []string
		for _, it := range r.Output {
			id := strings.Replace(it.ID, strings.TrimPrefix(r.ID, "resp_"), "RUN", 1)
			out = append(out, it.Type+" "+id)
		}
		return out
	}
	w, s := shape(*whole), shape(streamed)
	if strings.Join(w, ",") != strings.Join(s, ",") || len(w) < 2 || w[0] != "reasoning rs_RUN_0" {
		t.Errorf("whole %v, streamed %v", w, s)
	}
	if whole.OutputText() != streamed.OutputText() || whole.OutputText() == "" {
		t.Errorf("texts differ: %q vs %q", whole.OutputText(), streamed.OutputText())
	}
	if len(whole.Output[0].Summary) != 1 || !strings.Contains(whole.Output[0].Summary[0].Text, "winner") {
		t.Errorf("the reasoning item lacks the progress lines: %s", whole.RawJSON())
	}
}

// Hosted tools the team cannot run are left out with a note; a
// namespace's functions are offered as functions.
func TestHostedToolsAreLeftOutAndNamespacesUnpacked(t *testing.T) {
	f := start(t, setup{configs: map[string]string{
		"weather.yaml":           "agent:\n  id: solo\n  backend: {type: sim, model: sim-w, scenario: scenarios/weather.yaml}\n",
		"scenarios/weather.yaml": weatherScenario,
	}})
	body := `{"model":"massgen/weather","input":"What should I wear in Paris today?","tools":[
		{"type":"web_search"},{"type":"custom","name":"apply_patch","description":"patch files"},{"type":"code_interpreter","container":{"type":"auto"}},
		{"type":"namespace","name":"weather_mcp","description":"weather tools","tools":[
			{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}]}`
	var r struct {
		Output []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"output"`
		Tools   []map[string]any `json:"tools"`
		Massgen struct {
			Notes []string `json:"notes"`
		} `json:"massgen"`
	}
	code, raw := postJSON(t, f, "/v1/responses", body)
	if code != 200 {
		t.Fatalf("%d %s", code, raw)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var called bool
	for _, it := range r.Output {
		called = called || (it.Type == "function_call" && it.Name == "get_weather")
	}
	if !called {
		t.Errorf("the namespace's function was not offered: %s", raw)
	}
	notes := strings.Join(r.Massgen.Notes, "\n")
	for _, want := range []string{"web_search", "custom apply_patch", "code_interpreter"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %q", want, notes)
		}
	}
	if len(r.Tools) != 4 {
		t.Errorf("tools echoed: %v", r.Tools)
	}
	// Chat completions: a custom tool is left out too, not refused.
	code, raw = postJSON(t, f, "/v1/chat/completions", `{"model":"massgen","messages":[{"role":"user","content":"q"}],
		"tools":[{"type":"custom","custom":{"name":"grammar_tool"}}]}`)
	if code != 200 || !strings.Contains(string(raw), "left out") {
		t.Errorf("chat with a custom tool: %d %s", code, raw)
	}
}

// apiErr is err with the API's message, for test failures.
func apiErr(err error) string {
	if e, ok := errors.AsType[*openai.Error](err); ok {
		return e.Error() + ": " + e.Message
	}
	return err.Error()
}

// A config added to --config-dir after the start is served without a
// restart, and listed; one removed is gone.
func TestConfigsAddedAfterTheStartAreFound(t *testing.T) {
	f := start(t, setup{configs: map[string]string{"first.yaml": "agent: {id: a, backend: {type: sim, model: sim-a}}\n"}})
	if _, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/later", "q")); statusOf(err) != http.StatusNotFound {
		t.Fatalf("before it exists: %v", err)
	}
	later := filepath.Join(f.dir, "configs", "later.yaml")
	if err := os.WriteFile(later, []byte("agent: {id: b, backend: {type: sim, model: sim-b}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/later", "q"))
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if !strings.Contains(resp.Choices[0].Message.Content, "sim-b") {
		t.Errorf("massgen/later answered %q", resp.Choices[0].Message.Content)
	}
	if _, err := f.client.Models.Get(ctx10(t), "massgen/later"); err != nil {
		t.Errorf("GET /v1/models/massgen/later: %v", err)
	}
	if err := os.Remove(later); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/later", "q")); statusOf(err) != http.StatusNotFound {
		t.Errorf("after its removal: %v", err)
	}
}
