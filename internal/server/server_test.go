package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/cli"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a massgen server on 127.0.0.1 whose runner is the CLI's, and
// an official openai-go client pointed at it.
type fixture struct {
	srv    *server.Server
	url    string
	dir    string // working directory of the runs (logs under .massgen/)
	hc     *http.Client
	client openai.Client
}

type setup struct {
	deps    server.Deps       // Run and Configs are filled in when nil
	serve   cli.ServeOptions  // default config: @examples/sim_three_agents
	configs map[string]string // files of the --config-dir
	key     string            // API key the client sends
	env     map[string]string // environment of the runs, besides HOME
}

func start(t *testing.T, s setup) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "configs")
	for name, body := range s.configs {
		p := filepath.Join(cfgDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := &cli.Env{
		Getenv: func(k string) string {
			if k == "HOME" {
				return dir // no user config or key leaks in
			}
			return s.env[k]
		},
		Stdout: io.Discard, Stderr: io.Discard, WorkDir: dir,
	}
	if s.serve.Config == "" && s.serve.DefaultModel == "" {
		s.serve.Config = "@examples/sim_three_agents"
	}
	d := s.deps
	var runner *cli.ServeRunner
	if d.Run == nil {
		runner = cli.NewServeRunner(env, s.serve)
		d.Run = runner.Run
	}
	if d.Configs == nil && d.ConfigSource == nil {
		// As massgen serve does: the --config-dir read again when it changes.
		dirArg := ""
		if len(s.configs) > 0 {
			dirArg = cfgDir
		}
		var err error
		if d.ConfigSource, err = cli.ServeConfigSource(dirArg); err != nil {
			t.Fatal(err)
		}
	}
	d.Version = "test"
	srv := server.New(d)
	hs := httptest.NewServer(srv.Handler())
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
		tr.CloseIdleConnections()
		if runner != nil {
			runner.Close()
		}
	})
	key := s.key
	if key == "" {
		key = "unused"
	}
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	return &fixture{srv: srv, url: hs.URL, dir: dir, hc: hc, client: client}
}

// team is a config of chatcompletion agents on the simulator at base.
func team(base string, models ...string) string {
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, m := range models {
		fmt.Fprintf(&b, "  - id: agent_%d\n    backend: {type: chatcompletion, model: %s, base_url: %q}\n", i+1, m, base)
	}
	return b.String()
}

func ask(model, question string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)}}
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// massgenExt reads the `massgen` extension object of a response.
func massgenExt(t *testing.T, raw string) (ext struct {
	RunID   string         `json:"run_id"`
	Winner  string         `json:"winner"`
	Status  string         `json:"status"`
	LogDir  string         `json:"log_dir"`
	Votes   map[string]int `json:"votes"`
	Answers int            `json:"answers"`
}) {
	t.Helper()
	var v struct {
		Massgen *json.RawMessage `json:"massgen"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Massgen == nil {
		t.Fatalf("no massgen object in %s", raw)
	}
	if err := json.Unmarshal(*v.Massgen, &ext); err != nil {
		t.Fatal(err)
	}
	return ext
}

func statusOf(err error) int {
	if e, ok := errors.AsType[*openai.Error](err); ok {
		return e.StatusCode
	}
	return 0
}

func TestNonStreamingAnswerWithUsage(t *testing.T) {
	f := start(t, setup{})
	resp, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", "What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != "stop" || ch.Message.Role != "assistant" || !strings.Contains(ch.Message.Content, "Final answer") {
		t.Errorf("choice = %+v", ch)
	}
	u := resp.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v", u)
	}
	ext := massgenExt(t, resp.RawJSON())
	if resp.ID != "chatcmpl-"+ext.RunID || ext.Status != "completed" || ext.Winner == "" || resp.Object != "chat.completion" {
		t.Errorf("id %s object %s massgen %+v", resp.ID, resp.Object, ext)
	}
	// From the run's view: the winner's tally and the answers of the run
	// (the simulator's three agents answer once each, then all vote).
	if ext.Votes[ext.Winner] == 0 || ext.Answers != 3 {
		t.Errorf("massgen votes %v answers %d, want votes for the winner %s and 3 answers", ext.Votes, ext.Answers, ext.Winner)
	}
	// The run wrote the usual logs, and the final answer there is the content.
	answer, err := os.ReadFile(filepath.Join(ext.LogDir, "final", ext.Winner, "answer.txt"))
	if err != nil || strings.TrimSpace(string(answer)) != strings.TrimSpace(ch.Message.Content) {
		t.Errorf("final/%s/answer.txt = %q (%v), content %q", ext.Winner, answer, err, ch.Message.Content)
	}
	if !strings.HasPrefix(ext.LogDir, filepath.Join(f.dir, ".massgen", "massgen_logs")) {
		t.Errorf("log dir %s is not under the working directory", ext.LogDir)
	}

	// GET /v1/runs/{id} serves the run's status.json.
	var st struct {
		Meta    struct{ Status, LogDir string } `json:"meta"`
		Results struct{ Winner string }         `json:"results"`
	}
	getJSON(t, f, "/v1/runs/"+ext.RunID, 200, &st)
	if st.Meta.Status != "completed" || st.Results.Winner != ext.Winner {
		t.Errorf("status.json = %+v", st)
	}
	getJSON(t, f, "/v1/runs/0123456789abcdef", 404, nil)
}

func getJSON(t *testing.T, f *fixture, path string, want int, v any) {
	t.Helper()
	resp, err := f.hc.Get(f.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, b)
		}
	}
}

func TestStreamingDeliversProgressAndTheAnswerAsTheRunHappens(t *testing.T) {
	f := start(t, setup{})
	p := ask("massgen", "What is the capital of France?")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := f.client.Chat.Completions.NewStreaming(ctx10(t), p)
	var acc openai.ChatCompletionAccumulator
	var chunks []openai.ChatCompletionChunk
	for st.Next() {
		c := st.Current()
		chunks = append(chunks, c)
		if !acc.AddChunk(c) {
			t.Fatalf("accumulator rejected chunk %s", c.RawJSON())
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	msg := acc.Choices[0].Message
	if !strings.Contains(msg.Content, "Final answer") || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("assembled message = %+v, finish %s", msg, acc.Choices[0].FinishReason)
	}
	if acc.Usage.TotalTokens <= 0 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
		t.Errorf("usage = %+v", acc.Usage)
	}
	// The streamed content is exactly the run's final answer.
	var fin openai.ChatCompletionChunk
	for _, c := range chunks {
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != "" {
			fin = c
		}
	}
	ext := massgenExt(t, fin.RawJSON())
	answer, _ := os.ReadFile(filepath.Join(ext.LogDir, "final", ext.Winner, "answer.txt"))
	if strings.TrimSpace(string(answer)) != strings.TrimSpace(msg.Content) {
		t.Errorf("streamed %q, answer file %q", msg.Content, answer)
	}
	// The presentation arrived in several deltas, not in one piece at the end.
	deltas := 0
	for _, c := range chunks {
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			deltas++
		}
	}
	if deltas < 3 {
		t.Errorf("the final answer came in %d content deltas", deltas)
	}
}

func TestRawSSEHasReasoningProgressUsageAndDone(t *testing.T) {
	f := start(t, setup{})
	datas := rawSSE(t, f, `{"model":"massgen","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":"What is the capital of France?"}]}`)
	var reasoning strings.Builder
	var sawUsage bool
	for i, d := range datas[:len(datas)-1] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Role             string `json:"role"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %d: %v: %s", i, err, d)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %d object %q", i, c.Object)
		}
		if i == 0 && (len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant") {
			t.Errorf("first chunk is not the role chunk: %s", d)
		}
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.ReasoningContent)
		}
		if c.Usage != nil {
			sawUsage = i == len(datas)-2 && c.Usage.TotalTokens > 0
		}
	}
	if datas[len(datas)-1] != "[DONE]" {
		t.Errorf("stream ends with %s", datas[len(datas)-1])
	}
	if !sawUsage {
		t.Error("no usage chunk just before [DONE]")
	}
	for _, want := range []string{"[massgen] run started: 3 agents: researcher [sim/sim-alpha, simulated], critic", "[critic] working",
		"answered agent", "voted for", "[massgen] winner: ", "is writing the final answer"} {
		if !strings.Contains(reasoning.String(), want) {
			t.Errorf("reasoning_content lacks %q:\n%s", want, reasoning.String())
		}
	}
	// The last progress line comes before the answer (clients would show
	// a later one as a second reasoning block); the run's summary is in
	// the massgen object.
	last := regexp.MustCompile(`\] is writing the final answer\n$`)
	if !last.MatchString(reasoning.String()) {
		t.Errorf("reasoning_content does not end with the presentation's start (%s):\n%s", last, reasoning.String())
	}
}

// rawSSE posts body and returns the data payloads of the event stream.
func rawSSE(t *testing.T, f *fixture, body string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx10(t), "POST", f.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	if len(out) < 3 {
		t.Fatalf("stream has %d events", len(out))
	}
	return out
}

func TestHistorySystemAndToolResultsReachTheAgents(t *testing.T) {
	sim, base := simtest.Start(t, "")
	f := start(t, setup{configs: map[string]string{"pair.yaml": team(base, "m-one", "m-two")}})
	p := openai.ChatCompletionNewParams{Model: "massgen/pair", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Answer in French."),
		openai.UserMessage("What is the capital of Italy?"),
		openai.AssistantMessage("Rome."),
		openai.UserMessage("And of France?"),
		// The client ran a tool an earlier response asked for and sends its result.
		{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_1",
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}}},
		openai.ToolMessage("18 C, sunny", "call_1"),
	}}
	resp, err := f.client.Chat.Completions.New(ctx10(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content == "" {
		t.Error("empty answer")
	}
	recs := sim.Requests()
	if len(recs) < 5 { // two answers, two votes, a presentation at least
		t.Fatalf("only %d upstream requests", len(recs))
	}
	for _, r := range recs {
		var user string
		for _, m := range r.Messages {
			if m.Role == "user" {
				user = m.Content
			}
		}
		if !strings.Contains(user, "<CONVERSATION_HISTORY>\nUser: What is the capital of Italy?\nAssistant: Rome.\n<END OF CONVERSATION_HISTORY>") {
			t.Errorf("request %d (%s, %s) lacks the history:\n%s", r.ID, r.Model, r.Step, user)
		}
		if !strings.Contains(user, "Answer in French.\n\nAnd of France?") {
			t.Errorf("request %d lacks the system message before the question:\n%s", r.ID, user)
		}
		if !strings.Contains(user, "- The assistant called get_weather({\"city\":\"Paris\"})\n- get_weather returned: 18 C, sunny") {
			t.Errorf("request %d lacks the tool result:\n%s", r.ID, user)
		}
	}
}

const weatherScenario = `
models:
  sim-w:
    steps:
      - answer: "Call get_weather for Paris."
      - vote: agent1
      - calls:
          - name: get_weather
            arguments: '{"city":"Paris"}'
`

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: openai.String("Current weather for a city"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})
}

func TestClientToolCalledByTheWinnerComesBackAsToolCalls(t *testing.T) {
	f := start(t, setup{configs: map[string]string{
		"weather.yaml":           "agent:\n  id: solo\n  backend: {type: sim, model: sim-w, scenario: scenarios/weather.yaml}\n",
		"scenarios/weather.yaml": weatherScenario,
	}})
	p := ask("massgen/weather", "What should I wear in Paris today?")
	p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
	resp, err := f.client.Chat.Completions.New(ctx10(t), p)
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("choice = %s", ch.RawJSON())
	}
	call := ch.Message.ToolCalls[0]
	if call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Paris"}` || call.ID == "" || call.Type != "function" {
		t.Errorf("tool call = %s", call.RawJSON())
	}

	// The same through a stream, assembled by the SDK's accumulator.
	st := f.client.Chat.Completions.NewStreaming(ctx10(t), p)
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	for st.Next() {
		acc.AddChunk(st.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if acc.Choices[0].FinishReason != "tool_calls" || len(acc.Choices[0].Message.ToolCalls) != 1 ||
		acc.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || len(finished) != 1 {
		t.Errorf("streamed = %+v, finished %+v", acc.Choices[0], finished)
	}
}

func TestToolNamesCollidingWithWorkflowToolsAre400(t *testing.T) {
	f := start(t, setup{})
	p := ask("massgen", "q")
	p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool(),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "vote"}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "new_answer"})}
	_, err := f.client.Chat.Completions.New(ctx10(t), p)
	e, ok := errors.AsType[*openai.Error](err)
	if !ok || e.StatusCode != 400 || e.Code != "tool_name_collision" || e.Param != "tools" {
		t.Fatalf("err = %v", err)
	}
	var body struct {
		Error struct{ Collisions []string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(e.RawJSON()), &body.Error)
	if !strings.Contains(e.Message, "vote, new_answer") || len(body.Error.Collisions) != 2 {
		t.Errorf("message %q, raw %s", e.Message, e.RawJSON())
	}
}

func TestModelsListAndUnknownModels(t *testing.T) {
	f := start(t, setup{configs: map[string]string{"mine.yaml": "agent: {id: a, backend: {type: sim}}\n"}})
	page, err := f.client.Models.List(ctx10(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range page.Data {
		ids[m.ID] = true
		if m.Object != "model" || m.OwnedBy != "massgen" {
			t.Errorf("model %s", m.RawJSON())
		}
	}
	for _, want := range []string{"massgen", "massgen/sim_three_agents", "massgen/sim_single_agent", "massgen/mine"} {
		if !ids[want] {
			t.Errorf("models lack %s: %v", want, ids)
		}
	}
	resp, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/mine", "q"))
	if err != nil || resp.Choices[0].Message.Content == "" {
		t.Errorf("massgen/mine: %v", err)
	}
	for _, model := range []string{"no-such-model", "massgen/nope"} {
		_, err := f.client.Chat.Completions.New(ctx10(t), ask(model, "q"))
		if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 404 || e.Code != "model_not_found" {
			t.Errorf("%s: err = %v", model, err)
		}
	}
	// A model whose provider massgen knows runs as a single agent.
	resp, err = f.client.Chat.Completions.New(ctx10(t), ask("sim-quick", "q"))
	if err != nil || !strings.Contains(resp.Choices[0].Message.Content, "sim-quick") {
		t.Errorf("sim-quick: %v %+v", err, resp)
	}
}

func TestStreamingStartsLongBeforeTheRunEnds(t *testing.T) {
	_, base := simtest.Start(t, "defaults: {ttft_ms: 120}\n")
	f := start(t, setup{configs: map[string]string{"slow.yaml": team(base, "m-a")}})
	began := time.Now()
	st := f.client.Chat.Completions.NewStreaming(ctx10(t), ask("massgen/slow", "q"))
	defer st.Close()
	var role, answered, firstContent, finish time.Duration
	for st.Next() {
		c := st.Current()
		at := time.Since(began)
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0]
		switch {
		case d.Delta.Role == "assistant" && role == 0:
			role = at
		case strings.Contains(d.Delta.JSON.ExtraFields["reasoning_content"].Raw(), "answered") && answered == 0:
			answered = at
		case d.Delta.Content != "" && firstContent == 0:
			firstContent = at
		case d.FinishReason != "":
			finish = at
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("role chunk at %v, first answer at %v, first content at %v, finish at %v", role, answered, firstContent, finish)
	// Three model calls of at least 120 ms each: answer, vote, presentation.
	if !(role > 0 && role < answered && answered < firstContent && firstContent <= finish) || finish-role < 240*time.Millisecond {
		t.Errorf("chunks did not arrive as the run happened")
	}
}
