package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// outcome is what a response amounts to, computed once from the recording by
// the test's own parser and once through the adapter.
type outcome struct {
	Text      string
	Reasoning string
	ToolCalls []llm.ToolCall
	Usage     *llm.Usage
	Finish    string
}

func TestOpenAIResponsesCommon(t *testing.T) {
	replayFiles(t, "TestOpenAIResponsesCommon/*/*.yaml", false)
}

func TestOpenAIResponsesWithSummaryThinking(t *testing.T) {
	replayFiles(t, "TestOpenAIResponsesWithSummaryThinking/*/*.yaml", true)
}

// TestOpenAIWebSearch replays responses that used OpenAI's server-side web
// search: the search call items are not ours to yield, the answer text is.
func TestOpenAIWebSearch(t *testing.T) {
	replayFiles(t, "TestOpenAIWebSearch/*.yaml", false)
}

// replayFiles serves every Responses interaction of every recording matching
// pattern and checks what the adapter makes of it, and what it sends for the
// recorded conversation. thinking says each file must carry reasoning.
//
// Streamed recordings are served as recorded. A recording of a
// non-streaming call is served as a stream holding only its final
// `response.completed` event, as a minimal server would send it: the adapter
// must then find the text, reasoning and calls in the final response.
func replayFiles(t *testing.T, pattern string, thinking bool) {
	root := filepath.Join(llmtest.RecordingsDir, strings.SplitN(pattern, "/", 2)[0])
	files := llmtest.Recordings(t, pattern)
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		t.Run(strings.TrimSuffix(rel, ".yaml"), func(t *testing.T) {
			c := llmtest.LoadCassette(t, file)
			reasoning := false
			for i, it := range c.Interactions {
				if !strings.HasSuffix(it.Request.URL, "/responses") {
					t.Logf("interaction %d is not a Responses call (%s); skipped", i, it.Request.URL)
					continue
				}
				var recorded map[string]any
				if err := json.Unmarshal([]byte(it.Request.Body), &recorded); err != nil {
					t.Fatalf("interaction %d: request body: %v", i, err)
				}
				req := requestFromRecording(t, recorded)
				body := it.Response.Body
				var want outcome
				if recorded["stream"] == true {
					want = parseSSE(t, body)
				} else {
					want = parseJSON(t, body)
					body = completedOnly(t, body)
				}
				got, sent := replay(t, it.Response.Code, it.Response.Headers, body, req)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("interaction %d: outcome mismatch (-recording +adapter):\n%s", i, diff)
				}
				for _, tc := range got.ToolCalls {
					if tc.ID == "" || tc.Name == "" || !json.Valid([]byte(tc.Arguments)) {
						t.Errorf("interaction %d: incomplete tool call %+v", i, tc)
					}
				}
				if got.Usage == nil || got.Usage.InputTokens == 0 || got.Usage.OutputTokens == 0 {
					t.Errorf("interaction %d: usage missing: %+v", i, got.Usage)
				}
				if i == 0 && strings.HasPrefix(filepath.Base(file), "multi_tool") && len(got.ToolCalls) < 2 {
					t.Errorf("multi_tool: got %d tool calls, want at least 2", len(got.ToolCalls))
				}
				reasoning = reasoning || got.Reasoning != ""
				checkSentMatchesRecorded(t, i, recorded, sent)
			}
			if thinking && !reasoning {
				t.Errorf("thinking: no reasoning in any response")
			}
		})
	}
}

// requestFromRecording rebuilds the provider-neutral request behind a
// recorded Responses request: developer messages are system messages,
// function_call items are assistant tool calls, function_call_output items
// are tool results.
func requestFromRecording(t *testing.T, rec map[string]any) *llm.Request {
	t.Helper()
	req := &llm.Request{Model: rec["model"].(string), Params: map[string]any{}}
	for _, k := range []string{"max_output_tokens", "reasoning", "tool_choice", "include"} {
		if v, ok := rec[k]; ok {
			req.Params[k] = v
		}
	}
	for _, raw := range rec["input"].([]any) {
		item := raw.(map[string]any)
		switch {
		case item["type"] == "function_call":
			call := llm.ToolCall{ID: item["call_id"].(string), Name: item["name"].(string), Arguments: item["arguments"].(string)}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleAssistant {
				req.Messages[n-1].ToolCalls = append(req.Messages[n-1].ToolCalls, call)
			} else {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}})
			}
		case item["type"] == "function_call_output":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: item["call_id"].(string), Content: item["output"].(string)})
		case item["role"] == "developer" || item["role"] == "system":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: messageText(t, item["content"])})
		case item["role"] == "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: messageText(t, item["content"])})
		case item["role"] == "assistant":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: messageText(t, item["content"])})
		default:
			t.Fatalf("recorded input item not understood: %v", item)
		}
	}
	tools, _ := rec["tools"].([]any)
	for _, raw := range tools {
		tool := raw.(map[string]any)
		if tool["type"] != "function" {
			continue // server-side tools (web_search) are not the seam's
		}
		req.Tools = append(req.Tools, llm.ToolDef{
			Name:        tool["name"].(string),
			Description: tool["description"].(string),
			Parameters:  tool["parameters"].(map[string]any),
		})
	}
	return req
}

func messageText(t *testing.T, content any) string {
	t.Helper()
	if s, ok := content.(string); ok {
		return s
	}
	var b strings.Builder
	for _, part := range content.([]any) {
		b.WriteString(part.(map[string]any)["text"].(string))
	}
	return b.String()
}

// checkSentMatchesRecorded compares what the adapter sent with the request
// OpenAI accepted when the recording was made: the same tools, calls, tool
// results and parameters in the same native shape. Messages may differ in
// form (a string rather than a list of input_text parts; instructions
// rather than a developer message), not in content.
func checkSentMatchesRecorded(t *testing.T, i int, rec, sent map[string]any) {
	t.Helper()
	if sent["stream"] != true || sent["store"] != false || sent["model"] != rec["model"] {
		t.Errorf("interaction %d: stream=%v store=%v model=%v", i, sent["stream"], sent["store"], sent["model"])
	}
	var recTools []any
	tools, _ := rec["tools"].([]any)
	for _, tool := range tools {
		if tool.(map[string]any)["type"] == "function" {
			recTools = append(recTools, tool)
		}
	}
	sentTools, _ := sent["tools"].([]any)
	if diff := cmp.Diff(recTools, sentTools, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("interaction %d: tools (-recorded +sent):\n%s", i, diff)
	}
	var recItems, recInstructions []any
	var recUser []string
	for _, raw := range rec["input"].([]any) {
		item := raw.(map[string]any)
		switch {
		case item["role"] == "developer" || item["role"] == "system":
			recInstructions = append(recInstructions, messageText(t, item["content"]))
		case item["role"] == "user":
			recUser = append(recUser, messageText(t, item["content"]))
		default:
			recItems = append(recItems, item)
		}
	}
	var sentItems []any
	var sentUser []string
	for _, raw := range sent["input"].([]any) {
		item := raw.(map[string]any)
		if item["role"] == "user" {
			sentUser = append(sentUser, item["content"].(string))
			continue
		}
		sentItems = append(sentItems, item)
	}
	if diff := cmp.Diff(recItems, sentItems); diff != "" {
		t.Errorf("interaction %d: function call items (-recorded +sent):\n%s", i, diff)
	}
	if diff := cmp.Diff(recUser, sentUser); diff != "" {
		t.Errorf("interaction %d: user messages (-recorded +sent):\n%s", i, diff)
	}
	if len(recInstructions) > 0 && sent["instructions"] != recInstructions[0] {
		t.Errorf("interaction %d: instructions = %v, want %v", i, sent["instructions"], recInstructions[0])
	}
	for _, k := range []string{"max_output_tokens", "tool_choice", "include"} {
		if !cmp.Equal(rec[k], sent[k]) {
			t.Errorf("interaction %d: %s = %v, want %v", i, k, sent[k], rec[k])
		}
	}
	wantReasoning := rec["reasoning"]
	if wantReasoning == nil && isReasoningModel(rec["model"].(string)) {
		// Not configured: the adapter asks for summaries, as it should.
		wantReasoning = map[string]any{"summary": "auto"}
	}
	if diff := cmp.Diff(wantReasoning, sent["reasoning"]); diff != "" {
		t.Errorf("interaction %d: reasoning (-want +sent):\n%s", i, diff)
	}
}

// replay serves one recorded response and runs req through the adapter. It
// returns what came out and the body the adapter sent.
func replay(t *testing.T, code int, headers map[string][]string, body string, req *llm.Request) (outcome, map[string]any) {
	t.Helper()
	var path string
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		if err := json.NewDecoder(r.Body).Decode(&sent); err != nil {
			t.Errorf("decode request: %v", err)
		}
		for k, vs := range headers {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()

	m := New(Options{Provider: "replay", BaseURL: srv.URL + "/v1", APIKey: "k", HTTPClient: srv.Client()})
	var got outcome
	done := 0
	for c, err := range m.Stream(t.Context(), req) {
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		if done > 0 {
			t.Fatalf("chunk %v after done", c.Kind)
		}
		switch c.Kind {
		case llm.ChunkText:
			got.Text += c.Text
		case llm.ChunkReasoning:
			got.Reasoning += c.Text
		case llm.ChunkToolCall:
			got.ToolCalls = append(got.ToolCalls, *c.ToolCall)
		case llm.ChunkUsage:
			got.Usage = c.Usage
		case llm.ChunkDone:
			got.Finish = c.FinishReason
			done++
		}
	}
	if done != 1 {
		t.Fatalf("got %d done chunks, want 1", done)
	}
	if path != "/v1/responses" {
		t.Errorf("request path %q, want /v1/responses", path)
	}
	return got, sent
}

// wire types for the test's own reading of recordings.
type (
	wireItem struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	wireResponse struct {
		Status            string     `json:"status"`
		Output            []wireItem `json:"output"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails struct {
				ReasoningTokens int64 `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	wireEvent struct {
		Type         string       `json:"type"`
		Delta        string       `json:"delta"`
		ItemID       string       `json:"item_id"`
		SummaryIndex int          `json:"summary_index"`
		ContentIndex int          `json:"content_index"`
		Item         wireItem     `json:"item"`
		Response     wireResponse `json:"response"`
	}
)

// finish fills usage and the finish reason from the final response.
func (r wireResponse) finish(o *outcome) {
	if u := r.Usage; u != nil {
		o.Usage = &llm.Usage{
			InputTokens:     u.InputTokens,
			OutputTokens:    u.OutputTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
			CachedTokens:    u.InputTokensDetails.CachedTokens,
		}
	}
	o.Finish = "stop"
	if len(o.ToolCalls) > 0 {
		o.Finish = "tool_calls"
	}
	if r.Status == "incomplete" {
		o.Finish = "length"
	}
}

// parseSSE reads a recorded stream: deltas for text and reasoning (parts
// separated by a blank line), finished items for calls, whose arguments must
// also equal the concatenated deltas.
func parseSSE(t *testing.T, body string) outcome {
	t.Helper()
	var o outcome
	args := map[string]string{}
	lastPart := ""
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var e wireEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("recorded event %q: %v", data, err)
		}
		switch e.Type {
		case "response.output_text.delta", "response.refusal.delta":
			o.Text += e.Delta
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			part := fmt.Sprint(e.Type, e.ItemID, e.SummaryIndex, e.ContentIndex)
			if lastPart != "" && part != lastPart {
				o.Reasoning += "\n\n"
			}
			lastPart = part
			o.Reasoning += e.Delta
		case "response.function_call_arguments.delta":
			args[e.ItemID] += e.Delta
		case "response.output_item.done":
			if e.Item.Type == "function_call" {
				if args[e.Item.ID] != e.Item.Arguments {
					t.Fatalf("recorded deltas %q do not add up to the arguments %q", args[e.Item.ID], e.Item.Arguments)
				}
				o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: e.Item.CallID, Name: e.Item.Name, Arguments: e.Item.Arguments})
			}
		case "response.completed", "response.incomplete":
			e.Response.finish(&o)
		}
	}
	return o
}

// parseJSON reads a recorded non-streaming response.
func parseJSON(t *testing.T, body string) outcome {
	t.Helper()
	var r wireResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("recorded body: %v", err)
	}
	var o outcome
	var reasoning []string
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				o.Text += c.Text + c.Refusal
			}
		case "reasoning":
			for _, s := range it.Summary {
				reasoning = append(reasoning, s.Text)
			}
		case "function_call":
			o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		}
	}
	o.Reasoning = strings.Join(reasoning, "\n\n")
	r.finish(&o)
	return o
}

// completedOnly wraps a recorded response object in the one event a
// minimal server would stream.
func completedOnly(t *testing.T, body string) string {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(body)); err != nil {
		t.Fatalf("recorded body: %v", err)
	}
	return fmt.Sprintf("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":%s}\n\n", compact.String())
}
