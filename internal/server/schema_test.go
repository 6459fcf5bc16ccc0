package server_test

import (
	"context"
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
