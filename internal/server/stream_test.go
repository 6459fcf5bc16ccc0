package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// fake starts a server whose runner replays events and returns res.
func fake(t *testing.T, events []event.Record, res *RunResult, err error) (*httptest.Server, func() []RunRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []RunRequest
	srv := New(Deps{Run: func(ctx context.Context, r RunRequest) (*RunResult, error) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		b := event.NewBroker()
		if r.Started != nil {
			r.Started("", b.View(), b)
		}
		for _, rec := range events {
			e, err := event.FromRecord(rec)
			if err != nil {
				t.Error(err)
				continue
			}
			e = b.Publish(e)
			if r.Observe != nil && !slices.Contains([]event.Type{event.TypeTextDelta, event.TypeReasoningDelta}, e.Type()) {
				r.Observe(e)
			}
		}
		return res, nil
	}, Configs: map[string]string{"massgen/x": "@examples/x"}})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		_ = srv.Shutdown(t.Context())
		hs.Close()
	})
	return hs, func() []RunRequest {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// hc bounds every request of these tests in time.
var hc = &http.Client{Timeout: 10 * time.Second}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := hc.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// sse posts a streaming request and returns the data payloads.
func sse(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := hc.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// content assembles the content deltas of a stream.
func content(t *testing.T, datas []string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range datas {
		if d == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("bad chunk %s: %v", d, err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				b.WriteString(*ch.Delta.Content)
			}
		}
	}
	return b.String()
}

const streamBody = `{"model":"massgen","stream":true,"messages":[{"role":"user","content":"q"}]}`

func TestStreamReconcilesDeltasWithTheFinalAnswer(t *testing.T) {
	ev := func(typ event.Type, text string) event.Record { return event.Record{Type: typ, Agent: "a", Text: text} }
	for _, tc := range []struct {
		name   string
		events []event.Record
		final  string
		want   string
	}{
		{"dropped deltas are sent at the end", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Hel"),
			ev(event.TypeFinalAnswer, "Hello world")}, "Hello world", "Hello world"},
		{"every delta arrived", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Hello "), ev(event.TypeFinalDelta, "world"),
			ev(event.TypeFinalAnswer, "Hello world")}, "Hello world", "Hello world"},
		{"a failed presentation is followed by the stored answer", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Partial"),
			{Type: event.TypeFinalAnswer, Agent: "a", Text: "Stored answer.", Reason: "the presentation failed"}}, "Stored answer.", "Partial\n\nStored answer."},
		{"an orchestration restart presents again after a blank line", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "A"),
			ev(event.TypeFinalAnswer, "A"), ev(event.TypeRunRestarted, ""), ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "B"),
			ev(event.TypeFinalAnswer, "B")}, "B", "A\n\nB"},
		{"no events at all: the result's final answer", nil, "Only the result.", "Only the result."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, _ := fake(t, tc.events, &RunResult{Status: "completed", Final: tc.final, Winner: "a"}, nil)
			datas := sse(t, hs.URL, streamBody)
			if got := content(t, datas); got != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			if datas[len(datas)-1] != "[DONE]" {
				t.Errorf("last data = %s, want [DONE]", datas[len(datas)-1])
			}
		})
	}
}

func TestStreamShape(t *testing.T) {
	events := []event.Record{
		{Type: event.TypeRunStarted, Agents: []string{"a", "b"}},
		{Type: event.TypeTurnStarted, Agent: "a"},
		{Type: event.TypeTextDelta, Agent: "a", Text: "coordination text is not content"},
		{Type: event.TypeAnswerAccepted, Agent: "a", Label: "agent1.1", Text: "answer"},
		{Type: event.TypeTurnEnded, Agent: "a", InputTokens: 7, OutputTokens: 3, CostUSD: 0.25},
		{Type: event.TypeVoteAccepted, Agent: "b", Target: "a", Reason: "complete"},
		{Type: event.TypeWinnerSelected, Agent: "a", Votes: map[string]int{"a": 2}},
		{Type: event.TypeFinalStarted, Agent: "a"},
		{Type: event.TypeFinalDelta, Agent: "a", Text: "Final"},
		{Type: event.TypeFinalAnswer, Agent: "a", Text: "Final", Reason: "presentation", InputTokens: 3, OutputTokens: 2},
		{Type: event.TypeRunFinished, Status: "completed", Agent: "a"},
	}
	res := &RunResult{Status: "completed", Final: "Final", Winner: "a", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5},
		ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
	hs, _ := fake(t, events, res, nil)
	datas := sse(t, hs.URL, `{"model":"massgen","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"q"}]}`)
	var chunks []chunk
	var reasoning strings.Builder
	var sawContent bool
	for _, d := range datas[:len(datas)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.ReasoningContent)
			// Clients show reasoning after content as a second block.
			if sawContent && ch.Delta.ReasoningContent != "" {
				t.Errorf("reasoning_content after the answer: %s", d)
			}
			sawContent = sawContent || (ch.Delta.Content != nil && *ch.Delta.Content != "")
		}
	}
	// The run's summary is the finishing chunk's massgen object.
	if info := chunks[len(chunks)-2].Massgen; info == nil || info.Winner != "a" || info.Votes["a"] != 2 || info.CostUSD != 0.25 {
		t.Errorf("finishing chunk's massgen object = %+v", chunks[len(chunks)-2].Massgen)
	}
	if first := chunks[0]; first.Choices[0].Delta.Role != "assistant" || first.Object != "chat.completion.chunk" || !strings.HasPrefix(first.ID, "chatcmpl-") {
		t.Errorf("first chunk = %+v, want the role chunk", first)
	}
	for _, want := range []string{"[massgen] run started: 2 agents: a, b\n", "[a] working\n", "[a] answered agent1.1: answer\n",
		"[b] voted for a: complete\n", "[massgen] winner: a (votes a=2)\n", "[a] is writing the final answer\n"} {
		if !strings.Contains(reasoning.String(), want) {
			t.Errorf("reasoning_content lacks %q:\n%s", want, reasoning.String())
		}
	}
	if strings.Contains(reasoning.String(), "turn ended") {
		t.Errorf("reasoning_content shows a turn's usage:\n%s", reasoning.String())
	}
	if got := content(t, datas); got != "Final" {
		t.Errorf("content = %q", got)
	}
	n := len(chunks)
	calls, fin, usage := chunks[n-3], chunks[n-2], chunks[n-1]
	if tc := calls.Choices[0].Delta.ToolCalls; len(tc) != 1 || tc[0].Function.Name != "get_weather" || tc[0].Index == nil || *tc[0].Index != 0 {
		t.Errorf("tool call chunk = %+v", calls)
	}
	if fr := fin.Choices[0].FinishReason; fr == nil || *fr != "tool_calls" || fin.Massgen == nil || fin.Massgen.Winner != "a" {
		t.Errorf("finish chunk = %+v", fin)
	}
	if m := fin.Massgen; m == nil || m.Votes["a"] != 2 || m.Answers != 1 || m.CostUSD != 0.25 {
		t.Errorf("massgen object = %+v, want the view's tally a=2, 1 answer, $0.25", m)
	}
	if len(usage.Choices) != 0 || usage.Usage == nil || usage.Usage.TotalTokens != 15 {
		t.Errorf("usage chunk = %+v", usage)
	}
	for _, c := range chunks {
		if c.ID != chunks[0].ID {
			t.Errorf("chunk id %s differs from %s", c.ID, chunks[0].ID)
		}
	}
}

func TestFailedAndTimedOutRuns(t *testing.T) {
	for _, tc := range []struct {
		status coord.RunStatus
		code   int
	}{{"failed", 500}, {"timeout", 504}} {
		t.Run(string(tc.status), func(t *testing.T) {
			hs, _ := fake(t, []event.Record{{Type: event.TypeRunStarted}}, &RunResult{Status: tc.status, Err: errors.New("every agent failed")}, nil)
			resp, body := post(t, hs.URL, `{"model":"massgen","messages":[{"role":"user","content":"q"}]}`)
			var eb errorBody
			if resp.StatusCode != tc.code || json.Unmarshal(body, &eb) != nil || !strings.Contains(eb.Error.Message, "every agent failed") {
				t.Fatalf("status %d body %s", resp.StatusCode, body)
			}
			datas := sse(t, hs.URL, streamBody)
			n := len(datas)
			if n < 3 || datas[n-1] != "[DONE]" || !strings.HasPrefix(datas[n-2], `{"error":{`) || !strings.Contains(datas[n-2], "every agent failed") {
				t.Fatalf("stream ends with %q", datas)
			}
		})
	}
}

func TestRunnerErrorsKeepTheirStatusEvenWhenStreaming(t *testing.T) {
	hs, _ := fake(t, nil, nil, NewError(http.StatusNotFound, "model_not_found", "no such model"))
	for _, body := range []string{`{"model":"gpt-nope","messages":[{"role":"user","content":"q"}]}`,
		`{"model":"gpt-nope","stream":true,"messages":[{"role":"user","content":"q"}]}`} {
		resp, b := post(t, hs.URL, body)
		if resp.StatusCode != 404 || !strings.Contains(string(b), `"code":"model_not_found"`) {
			t.Errorf("%s: status %d body %s", body, resp.StatusCode, b)
		}
	}
	hs, _ = fake(t, nil, nil, errors.New("disk full"))
	if resp, b := post(t, hs.URL, streamBody); resp.StatusCode != 500 || !strings.Contains(string(b), "disk full") {
		t.Errorf("plain error: status %d body %s", resp.StatusCode, b)
	}
}

func TestRequestDecoding(t *testing.T) {
	hs, seen := fake(t, nil, &RunResult{Status: "completed", Final: "ok"}, nil)
	resp, b := post(t, hs.URL, `{"model":"massgen/x","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Earlier"},{"type":"image_url","image_url":{"url":"data:,"}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"42"},
		{"role":"user","content":[{"type":"text","text":"Line one"},{"type":"text","text":"line two"}]},
		{"role":"assistant","content":"","tool_calls":[{"id":"c2","type":"function","function":{"name":"g","arguments":"{\"x\":1}"}}]},
		{"role":"tool","tool_call_id":"c2","content":"7"}],
		"tools":[{"type":"function","function":{"name":"g","description":"G","parameters":{"type":"object"}}}],
		"temperature":0.2}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	r := seen()[0]
	if r.Config != "@examples/x" || r.Model != "" {
		t.Errorf("routing: config %q model %q", r.Config, r.Model)
	}
	wantQ := "Be brief.\n\nLine one\nline two\n\nTool calls made for this question so far, and their results:\n- The assistant called g({\"x\":1})\n- g returned: 7"
	if r.Question != wantQ {
		t.Errorf("question = %q\nwant       %q", r.Question, wantQ)
	}
	wantH := []llm.Message{{Role: llm.RoleUser, Content: "Earlier"}, {Role: llm.RoleAssistant, Content: "[called f({})]"},
		{Role: llm.RoleUser, Content: "[result of f: 42]"}}
	if len(r.History) != len(wantH) {
		t.Fatalf("history = %+v", r.History)
	}
	for i := range wantH {
		if r.History[i].Role != wantH[i].Role || r.History[i].Content != wantH[i].Content {
			t.Errorf("history[%d] = %+v, want %+v", i, r.History[i], wantH[i])
		}
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "g" || r.Tools[0].Description != "G" {
		t.Errorf("tools = %+v", r.Tools)
	}

	for _, tc := range []struct{ body, code string }{
		{`{"model":`, "invalid_json"},
		{`{"model":"massgen"}`, "missing_messages"},
		{`{"model":"massgen","messages":[{"role":"system","content":"x"}]}`, "missing_user_message"},
		{`{"model":"massgen","messages":[{"role":"robot","content":"x"},{"role":"user","content":"q"}]}`, "invalid_role"},
		{`{"model":"massgen","n":2,"messages":[{"role":"user","content":"q"}]}`, "unsupported_parameter"},
		{`{"model":"massgen","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "empty_question"},
		{`{"model":"massgen","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"vote"}},{"type":"function","function":{"name":"submit"}}]}`, "tool_name_collision"},
	} {
		resp, b := post(t, hs.URL, tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":"`+tc.code+`"`) {
			t.Errorf("%s: status %d body %s, want 400 %s", tc.body, resp.StatusCode, b, tc.code)
		}
	}
	if resp, b := post(t, hs.URL, `{"model":"massgen/nope","messages":[{"role":"user","content":"q"}]}`); resp.StatusCode != 404 {
		t.Errorf("massgen/nope: status %d body %s", resp.StatusCode, b)
	}
}

func TestRoutesMethodsAndUnknownPaths(t *testing.T) {
	hs, _ := fake(t, nil, &RunResult{Status: "completed"}, nil)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/chat/completions", 405},
		{"POST", "/v1/models", 405},
		{"GET", "/v1/nothing", 404},
		{"GET", "/v1/runs/unknown", 404},
		{"GET", "/v1/models/massgen/x", 200},
		{"GET", "/v1/models/gpt-4o", 404},
		{"GET", "/health", 200},
	} {
		req, _ := http.NewRequest(tc.method, hs.URL+tc.path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s %s, want %d JSON", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), b, tc.status)
		}
		if tc.status >= 400 && !strings.HasPrefix(string(b), `{"error":{"message":`) {
			t.Errorf("%s %s: body %s is not an OpenAI error", tc.method, tc.path, b)
		}
	}
}
