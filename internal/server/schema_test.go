package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/server"
)

// Structured output: response_format / text.format reach the run, and the
// final answer is checked against the schema before it is sent.

var citySchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"city": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
	"required":             []any{"city", "population"},
	"additionalProperties": false,
}

// answering starts a server whose runs all answer final, and returns what
// the runner was asked.
func answering(t *testing.T, final string) (*fixture, func() []server.RunRequest) {
	var mu sync.Mutex
	var seen []server.RunRequest
	run := func(_ context.Context, r server.RunRequest) (*server.RunResult, error) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		return &server.RunResult{Status: coord.RunCompleted, Final: final, Winner: "a"}, nil
	}
	f := start(t, setup{deps: server.Deps{Run: run}})
	return f, func() []server.RunRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func chatWithSchema() openai.ChatCompletionNewParams {
	p := ask("massgen", "Which city is the capital of France, and how many live there?")
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "city", Schema: citySchema, Strict: openai.Bool(true)}}}
	return p
}

func TestAConformingAnswerIsSentWithoutItsCodeFence(t *testing.T) {
	f, asked := answering(t, "```json\n{\"city\": \"Paris\", \"population\": 2100000}\n```")
	resp, err := f.client.Chat.Completions.New(ctx10(t), chatWithSchema())
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if got := resp.Choices[0].Message.Content; got != `{"city": "Paris", "population": 2100000}` {
		t.Errorf("content = %q", got)
	}
	rr := asked()[0]
	if rr.Output == nil || rr.Output.Name != "city" || !rr.Output.Strict ||
		!strings.Contains(rr.Output.Instruction(), `"required":["city","population"]`) {
		t.Errorf("the run was not told the format: %+v", rr.Output)
	}
}

func TestANonConformingAnswerIs422(t *testing.T) {
	f, _ := answering(t, `{"city": "Paris", "population": "about two million"}`)
	_, err := f.client.Chat.Completions.New(ctx10(t), chatWithSchema())
	e, ok := errors.AsType[*openai.Error](err)
	if !ok || e.StatusCode != 422 || e.Code != "final_answer_schema_mismatch" || !strings.Contains(e.Message, "population") {
		t.Fatalf("err = %v", apiErr(err))
	}

	// Streamed: the stream ends with the error, which the SDK raises.
	st := f.client.Chat.Completions.NewStreaming(ctx10(t), chatWithSchema())
	for st.Next() {
	}
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "does not conform") {
		t.Errorf("stream error = %v", err)
	}
	st.Close()

	// Not JSON at all, through the Responses API's text.format.
	f, _ = answering(t, "The capital is Paris.")
	p := askResponses("massgen", "q")
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "city", Schema: citySchema}}}
	_, err = f.client.Responses.New(ctx10(t), p)
	if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 422 || !strings.Contains(e.Message, "not JSON") {
		t.Errorf("responses: %v", apiErr(err))
	}
	// json_object: any object.
	f, _ = answering(t, `["Paris"]`)
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}
	if _, err = f.client.Responses.New(ctx10(t), p); statusOf(err) != 422 {
		t.Errorf("json_object with an array: %v", err)
	}
}

func TestAConformingResponsesAnswerEchoesItsFormat(t *testing.T) {
	f, _ := answering(t, `{"city":"Paris","population":2100000}`)
	p := askResponses("massgen", "q")
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "city", Schema: citySchema}}}
	r, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if r.OutputText() != `{"city":"Paris","population":2100000}` || r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "city" {
		t.Errorf("response = %s", r.RawJSON())
	}
}

func TestABadSchemaIs400(t *testing.T) {
	f, asked := answering(t, "{}")
	code, raw := postJSON(t, f, "/v1/chat/completions", `{"model":"massgen","messages":[{"role":"user","content":"q"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":12}}}}`)
	if code != 400 || !strings.Contains(string(raw), "invalid_schema") {
		t.Errorf("%d %s", code, raw)
	}
	if len(asked()) != 0 {
		t.Error("a run started")
	}
}

// The format reaches the final presentation only: as response_format for
// a Chat Completions provider, as text.format for OpenAI's Responses
// API, with the instruction in its prompt; coordination turns carry
// neither. The simulator honours response_format on Chat Completions (its
// presentation is the JSON the schema asks for) but not text.format on the
// Responses API (its answer is no JSON: 422).
func TestTheFormatReachesTheFinalPresentationOnly(t *testing.T) {
	rec, url := startBodySim(t)
	f := start(t, setup{
		env: map[string]string{"GROQ_API_KEY": "k", "MASSGEN_GROQ_BASE_URL": url, "OPENAI_API_KEY": "k", "MASSGEN_OPENAI_BASE_URL": url},
		configs: map[string]string{
			"groq.yaml":   "agent: {id: a, backend: {type: groq, model: llama-3.3-70b-versatile}}\n",
			"openai.yaml": "agent: {id: a, backend: {type: openai, model: gpt-4o-mini, text: {verbosity: low}}}\n",
		},
	})
	for _, c := range []struct {
		model, key string
		status     int // 0: the answer came back, as JSON
		want       func(map[string]any) bool
	}{
		{"massgen/groq", "response_format", 0, func(b map[string]any) bool {
			rf, _ := b["response_format"].(map[string]any)
			js, _ := rf["json_schema"].(map[string]any)
			return rf["type"] == "json_schema" && js["name"] == "city" && js["strict"] == true && js["schema"] != nil
		}},
		{"massgen/openai", "text", 422, func(b map[string]any) bool {
			text, _ := b["text"].(map[string]any)
			format, _ := text["format"].(map[string]any)
			return format["type"] == "json_schema" && format["name"] == "city" && text["verbosity"] == "low"
		}},
	} {
		rec.start()
		p := chatWithSchema()
		p.Model = c.model
		resp, err := f.client.Chat.Completions.New(ctx10(t), p)
		switch {
		case statusOf(err) != c.status:
			t.Errorf("%s: status %d, want %d (%v)", c.model, statusOf(err), c.status, err)
		case err == nil:
			var city map[string]any
			if json.Unmarshal([]byte(resp.Choices[0].Message.Content), &city) != nil || city["city"] == nil {
				t.Errorf("%s: the answer is not the JSON asked for: %q", c.model, resp.Choices[0].Message.Content)
			}
		}
		var finals int
		for i, b := range decoded(t, rec.stop()) {
			raw, _ := json.Marshal(b)
			isFinal := strings.Contains(string(raw), `conforms to this JSON Schema`)
			if isFinal {
				finals++
				if !c.want(b) {
					t.Errorf("%s: the final presentation's request lacks the format: %s", c.model, raw)
				}
			} else if strings.Contains(string(raw), `"json_schema"`) {
				t.Errorf("%s: request %d, a coordination turn, asks for the format: %s", c.model, i, raw)
			}
		}
		if finals == 0 {
			t.Errorf("%s: no request carried the instruction", c.model)
		}
	}
}
