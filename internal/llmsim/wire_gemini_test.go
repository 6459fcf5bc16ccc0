package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// geminiClient is the official genai SDK pointed at the simulator. An
// explicit API key, backend and base URL keep it from reading GEMINI_API_KEY,
// GOOGLE_* variables or credentials; RetryOptions nil means no retries.
func geminiClient(t *testing.T, f *fixture) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "sim", Backend: genai.BackendGeminiAPI, HTTPClient: f.hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: strings.TrimSuffix(f.base, "/v1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func gemConfig(tools ...*genai.FunctionDeclaration) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are a test.", genai.RoleUser)}
	if len(tools) > 0 {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: tools}}
	}
	return cfg
}

func gemTool(name string, schema map[string]any) *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: name, ParametersJsonSchema: schema}
}

// gemResult is what a stream (or one response) carried.
type gemResult struct {
	chunks int
	text   strings.Builder
	calls  [][2]string
	finish genai.FinishReason
	usage  *genai.GenerateContentResponseUsageMetadata
	err    error
}

func (r *gemResult) add(resp *genai.GenerateContentResponse) {
	r.chunks++
	if resp.UsageMetadata != nil {
		r.usage = resp.UsageMetadata
	}
	if len(resp.Candidates) == 0 {
		return
	}
	c := resp.Candidates[0]
	if c.FinishReason != "" {
		r.finish = c.FinishReason
	}
	if c.Content == nil {
		return
	}
	for _, p := range c.Content.Parts {
		r.text.WriteString(p.Text)
		if p.FunctionCall != nil {
			args, _ := json.Marshal(p.FunctionCall.Args)
			r.calls = append(r.calls, [2]string{p.FunctionCall.Name, string(args)})
		}
	}
}

func runGemini(ctx context.Context, t *testing.T, f *fixture, model, user string, cfg *genai.GenerateContentConfig) *gemResult {
	r := new(gemResult)
	for resp, err := range geminiClient(t, f).Models.GenerateContentStream(ctx, model, genai.Text(user), cfg) {
		if err != nil {
			r.err = err
			break
		}
		r.add(resp)
	}
	return r
}

func TestGeminiStreamingText(t *testing.T) {
	f := start(t, scenario(t, `models: {gem: {final: "The final answer is forty-two, as computed by the simulator."}}`))
	r := runGemini(testCtx(t), t, f, "gem", "What is six times seven?", gemConfig())
	if r.err != nil {
		t.Fatal(r.err)
	}
	const want = "The final answer is forty-two, as computed by the simulator."
	if r.text.String() != want || r.finish != genai.FinishReasonStop || r.chunks < 2 {
		t.Errorf("text %q, finish %q, %d chunks", r.text.String(), r.finish, r.chunks)
	}
	rec := lastRecord(t, f)
	if rec.Wire != WireGemini || rec.Model != "gem" || rec.Step != "text" || rec.Outcome != OutcomeCompleted || !rec.Stream ||
		int(r.usage.CandidatesTokenCount) != rec.OutputTokens || rec.OutputTokens != countTokens(want) ||
		int(r.usage.PromptTokenCount) != rec.PromptTokens || r.usage.TotalTokenCount != r.usage.PromptTokenCount+r.usage.CandidatesTokenCount {
		t.Errorf("record %+v, usage %+v", rec, r.usage)
	}
	if len(rec.Messages) != 2 || rec.Messages[0].Role != "system" || rec.Messages[1].Content != "What is six times seven?" {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestGeminiNonStreaming(t *testing.T) {
	f := start(t, nil)
	ctx := testCtx(t)
	c := geminiClient(t, f)
	resp, err := c.Models.GenerateContent(ctx, "plain", genai.Text("Say hello"), gemConfig())
	if err != nil {
		t.Fatal(err)
	}
	var r gemResult
	r.add(resp)
	if !strings.HasPrefix(r.text.String(), "[sim model plain] Final answer to: Say hello. ") || r.finish != genai.FinishReasonStop ||
		int(r.usage.CandidatesTokenCount) != countTokens(r.text.String()) || resp.ModelVersion != "plain" {
		t.Errorf("response %+v", resp)
	}
	// A tool call, with a tool loop in the conversation.
	contents := []*genai.Content{
		genai.NewContentFromText(taskMessage, genai.RoleUser),
		genai.NewContentFromFunctionCall("read_file", map[string]any{"path": "x"}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("read_file", map[string]any{"result": "file text"}, genai.RoleUser),
	}
	resp, err = c.Models.GenerateContent(ctx, "gem", contents, gemConfig(gemTool("new_answer", newAnswerSchema())))
	if err != nil {
		t.Fatal(err)
	}
	r = gemResult{}
	r.add(resp)
	if len(r.calls) != 1 || r.calls[0][0] != "new_answer" || !strings.Contains(r.calls[0][1], "Answer 1 to: What is the capital of France?") {
		t.Errorf("calls %v", r.calls)
	}
	rec := lastRecord(t, f)
	if len(rec.Messages) != 4 || rec.Messages[2].Role != "assistant" || rec.Messages[2].ToolCalls[0] != "read_file" ||
		rec.Messages[3].Role != "tool" || rec.Messages[3].ToolCallID != "read_file" || rec.Messages[3].Content != `{"result":"file text"}` {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestGeminiToolCalls(t *testing.T) {
	f := start(t, scenario(t, strings.ReplaceAll(severalCalls, "  m:", "  gem:")))
	ctx := testCtx(t)
	na := gemTool("new_answer", newAnswerSchema())
	r := runGemini(ctx, t, f, "gem", "task", gemConfig(na, gemTool("vote", voteSchema("agent1"))))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.calls) != 3 || r.calls[0] != wantSeveral[0] || r.calls[1] != wantSeveral[1] || r.calls[2] != wantSeveral[2] {
		t.Errorf("calls %v", r.calls)
	}
	if r.text.String() != "Doing both." || r.finish != genai.FinishReasonStop {
		t.Errorf("text %q, finish %q", r.text.String(), r.finish)
	}
	// Default policy: new_answer, then a vote for the first label of a
	// classic (OpenAPI subset) schema.
	r = runGemini(ctx, t, f, "gem", taskMessage, gemConfig(na))
	var args struct{ Content string }
	if r.err != nil || len(r.calls) != 1 || json.Unmarshal([]byte(r.calls[0][1]), &args) != nil ||
		!strings.HasPrefix(args.Content, "[sim model gem] Answer 1 to: What is the capital of France?") {
		t.Fatalf("calls %v, %v", r.calls, r.err)
	}
	vote := &genai.FunctionDeclaration{Name: "vote", Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
		"agent_id": {Type: genai.TypeString, Enum: []string{"agent2", "agent1"}}, "reason": {Type: genai.TypeString}}}}
	r = runGemini(ctx, t, f, "gem", "task", gemConfig(na, vote))
	if len(r.calls) != 1 || r.calls[0][1] != `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}` {
		t.Errorf("vote %v", r.calls)
	}
	if rec := lastRecord(t, f); rec.Step != "vote" || strings.Join(rec.VoteEnum, ",") != "agent2,agent1" {
		t.Errorf("record %+v", rec)
	}
}

func TestGeminiFaults(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - {fault: "429", retry_after: 2}
      - {fault: cut}
      - {fault: malformed_tool_json}
      - {fault: malformed_tool_json}
  h: {always: {fault: hang}}
`))
	ctx := testCtx(t)
	cfg := gemConfig(gemTool("new_answer", newAnswerSchema()))
	r := runGemini(ctx, t, f, "m", "task", cfg)
	var apiErr genai.APIError
	if !errors.As(r.err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "RESOURCE_EXHAUSTED" ||
		len(apiErr.Details) != 1 || apiErr.Details[0]["retryDelay"] != "2s" {
		t.Fatalf("429: %#v", r.err)
	}
	w := log.Writer() // genai logs the transport error of the cut, which is expected here
	log.SetOutput(io.Discard)
	r = runGemini(ctx, t, f, "m", "task", cfg)
	log.SetOutput(w)
	if r.err == nil || r.finish != "" {
		t.Errorf("cut: err %v, finish %q", r.err, r.finish)
	}
	if rec := lastRecord(t, f); rec.Step != "fault:cut" || rec.Outcome != OutcomeFault || rec.OutputTokens == 0 {
		t.Errorf("cut record %+v", rec)
	}
	// Arguments that are not an object cannot be sent: MALFORMED_FUNCTION_CALL
	// (its finishMessage is on the wire, but genai's converter drops it).
	r = runGemini(ctx, t, f, "m", "task", cfg)
	if r.err != nil || len(r.calls) != 0 || r.finish != genai.FinishReasonMalformedFunctionCall {
		t.Errorf("malformed (streamed): %+v", r)
	}
	resp, err := geminiClient(t, f).Models.GenerateContent(ctx, "m", genai.Text("task"), cfg)
	if err != nil || resp.Candidates[0].FinishReason != genai.FinishReasonMalformedFunctionCall || len(resp.FunctionCalls()) != 0 {
		t.Errorf("malformed: %+v %v", resp, err)
	}

	hctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	n := len(f.sim.Requests()) // counted before the request goes out
	go func() { done <- runGemini(hctx, t, f, "h", "task", cfg).err }()
	if err := f.sim.WaitFor(ctx, func(rs []Record) bool { return len(rs) > n }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("no error after cancel")
	}
	waitOutcome(t, f, n, OutcomeCancelled)
}

func TestGeminiRoutes(t *testing.T) {
	f := start(t, nil)
	root := strings.TrimSuffix(f.base, "/v1")
	cases := []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1beta/models/g:streamGenerateContent", `{"contents":[{"parts":[{"text":"x"}]}]}`, 400}, // no alt=sse
		{"POST", "/v1beta/models/g:generateContent", `{"contents":[]}`, 400},
		{"POST", "/v1beta/models/g:generateContent", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{}]}]}`, 400},
		{"GET", "/v1beta/models/g:generateContent", "", 405},
		{"POST", "/v1beta/models/g:countTokens", "{}", 400}, // no contents
		{"POST", "/v1beta/models/g:embedContent", "{}", 404},
		{"POST", "/v1/models/g:generateContent", `{"contents":[{"parts":[{"text":"x"}]}]}`, 200},
	}
	for _, tc := range cases {
		req, _ := http.NewRequestWithContext(testCtx(t), tc.method, root+tc.path, strings.NewReader(tc.body))
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error *genai.APIError `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		ok := resp.StatusCode == tc.status && err == nil
		if tc.status != 200 {
			ok = ok && body.Error != nil && body.Error.Code == tc.status && body.Error.Status != "" && body.Error.Message != ""
		}
		if !ok {
			t.Errorf("%s %s: %d %+v %v", tc.method, tc.path, resp.StatusCode, body.Error, err)
		}
	}
}

// A request for JSON output of a schema (Gemini CLI's model router asks
// for {complexity_reasoning, complexity_score}) gets an instance of the
// schema, streamed or not; a scripted text that is JSON already is kept.
func TestGeminiJSONOutputFollowsTheSchema(t *testing.T) {
	f := start(t, scenario(t, `models: {scripted: {final: '{"complexity_score": 90}'}}`))
	ctx := testCtx(t)
	schema := map[string]any{"type": "OBJECT", "required": []string{"complexity_reasoning", "complexity_score"},
		"properties": map[string]any{
			"complexity_reasoning": map[string]any{"type": "STRING"},
			"complexity_score":     map[string]any{"type": "INTEGER", "minimum": 1},
			"choice":               map[string]any{"type": []string{"string", "null"}, "enum": []string{"flash", "pro"}},
			"tags":                 map[string]any{"type": "array", "items": map[string]any{"type": "boolean"}},
		}}
	cfg := gemConfig()
	cfg.ResponseMIMEType, cfg.ResponseJsonSchema = "application/json", schema
	type routed struct {
		Reasoning string  `json:"complexity_reasoning"`
		Score     *int    `json:"complexity_score"`
		Choice    string  `json:"choice"`
		Tags      []bool  `json:"tags"`
		Extra     *string `json:"extra"`
	}
	check := func(how, text string) {
		var got routed
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("%s: %q is not JSON: %v", how, text, err)
		}
		if got.Reasoning == "" || got.Score == nil || *got.Score != 1 || got.Choice != "flash" || len(got.Tags) != 1 || got.Extra != nil {
			t.Errorf("%s: %q does not follow the schema", how, text)
		}
	}
	r := runGemini(ctx, t, f, "router", "Route this.", cfg)
	if r.err != nil {
		t.Fatal(r.err)
	}
	check("streamed", r.text.String())
	if rec := lastRecord(t, f); rec.OutputTokens != countTokens(r.text.String()) || int(r.usage.CandidatesTokenCount) != rec.OutputTokens {
		t.Errorf("tokens: record %d, usage %d, text %d", rec.OutputTokens, r.usage.CandidatesTokenCount, countTokens(r.text.String()))
	}
	resp, err := geminiClient(t, f).Models.GenerateContent(ctx, "router", genai.Text("Route this."), cfg)
	if err != nil {
		t.Fatal(err)
	}
	check("whole", resp.Text())
	if int(resp.UsageMetadata.CandidatesTokenCount) != countTokens(resp.Text()) {
		t.Errorf("usage %+v for %q", resp.UsageMetadata, resp.Text())
	}
	resp, err = geminiClient(t, f).Models.GenerateContent(ctx, "scripted", genai.Text("Route this."), cfg)
	if err != nil || resp.Text() != `{"complexity_score": 90}` {
		t.Errorf("a scripted JSON text became %q (%v)", resp.Text(), err)
	}
	// Without the JSON MIME type a schema changes nothing.
	cfg.ResponseMIMEType = ""
	if r := runGemini(ctx, t, f, "router", "Route this.", cfg); !strings.HasPrefix(r.text.String(), "[sim model router]") {
		t.Errorf("plain text became %q", r.text.String())
	}
}

// countTokens answers with the prompt estimate a generation of the same
// contents is recorded with, and is not a generation itself.
func TestGeminiCountTokens(t *testing.T) {
	f := start(t, nil)
	ctx := testCtx(t)
	c := geminiClient(t, f)
	contents := genai.Text("How many tokens is this sentence, more or less?")
	count, err := c.Models.CountTokens(ctx, "counter", contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.sim.Requests()); n != 0 {
		t.Fatalf("countTokens was recorded as %d requests", n)
	}
	if _, err := c.Models.GenerateContent(ctx, "counter", contents, nil); err != nil {
		t.Fatal(err)
	}
	if rec := lastRecord(t, f); count.TotalTokens <= 0 || int(count.TotalTokens) != rec.PromptTokens {
		t.Errorf("countTokens %d, the generation's prompt %d", count.TotalTokens, rec.PromptTokens)
	}
	for _, body := range []string{`{}`, `{"contents": [}`} {
		resp, err := f.hc.Post(strings.TrimSuffix(f.base, "/v1")+"/v1beta/models/counter:countTokens", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"status":"INVALID_ARGUMENT"`) {
			t.Errorf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
}
