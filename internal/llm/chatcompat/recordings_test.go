package chatcompat

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

func TestOpenAICompatibleCommon(t *testing.T) { replayFolder(t, "TestOpenAICompatibleCommon", false) }
func TestOpenAICompatibleThinking(t *testing.T) {
	replayFolder(t, "TestOpenAICompatibleThinking", true)
}
func TestOpenAICommon(t *testing.T)       { replayFolder(t, "TestOpenAICommon", false) }
func TestOpenRouterCommon(t *testing.T)   { replayFolder(t, "TestOpenRouterCommon", false) }
func TestOpenRouterThinking(t *testing.T) { replayFolder(t, "TestOpenRouterThinking", true) }
func TestOpenRouterCommonWithAnthropicCache(t *testing.T) {
	replayFolder(t, "TestOpenRouterCommonWithAnthropicCache", false)
}

// replayFolder serves every Chat Completions interaction of every recording
// under folder (one subdirectory per model) and checks what the adapter
// makes of it. thinking says the first response of each file must carry
// reasoning.
func replayFolder(t *testing.T, folder string, thinking bool) {
	files := llmtest.Recordings(t, folder+"/*/*.yaml")
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file)) + "/" + strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			c := llmtest.LoadCassette(t, file)
			for i, it := range c.Interactions {
				if !strings.HasSuffix(it.Request.URL, "/chat/completions") {
					t.Logf("interaction %d is not Chat Completions (%s); skipped", i, it.Request.URL)
					continue
				}
				var reqBody struct {
					Model  string `json:"model"`
					Stream bool   `json:"stream"`
				}
				if err := json.Unmarshal([]byte(it.Request.Body), &reqBody); err != nil {
					t.Fatalf("interaction %d: request body: %v", i, err)
				}
				var want outcome
				if reqBody.Stream {
					want = parseSSE(t, it.Response.Body)
				} else {
					want = parseJSON(t, it.Response.Body)
				}
				got := replay(t, it.Response.Code, it.Response.Headers, it.Response.Body, reqBody.Model, reqBody.Stream)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("interaction %d (stream=%v): outcome mismatch (-recording +adapter):\n%s", i, reqBody.Stream, diff)
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
				if i == 0 && thinking && got.Reasoning == "" {
					t.Errorf("thinking: no reasoning in the first response")
				}
			}
		})
	}
}

// replay serves one recorded response and runs it through the adapter.
func replay(t *testing.T, code int, headers map[string][]string, body, model string, stream bool) outcome {
	t.Helper()
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		for k, vs := range headers {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()

	m := New(Options{Provider: "replay", BaseURL: srv.URL + "/v1", APIKey: "k", Model: model, Stream: stream, HTTPClient: srv.Client()})
	var got outcome
	done := 0
	for c, err := range m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}) {
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
	if path != "/v1/chat/completions" {
		t.Errorf("request path %q, want /v1/chat/completions", path)
	}
	return got
}

// wire types for the test's own reading of recordings.
type (
	wireToolCall struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireMessage struct {
		Content          string         `json:"content"`
		ReasoningContent string         `json:"reasoning_content"`
		Reasoning        string         `json:"reasoning"`
		ToolCalls        []wireToolCall `json:"tool_calls"`
	}
	wireUsage struct {
		PromptTokens            int64 `json:"prompt_tokens"`
		CompletionTokens        int64 `json:"completion_tokens"`
		CompletionTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	wireChoice struct {
		Delta        wireMessage `json:"delta"`
		Message      wireMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	}
	wireBody struct {
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage"`
	}
)

func (u *wireUsage) usage() *llm.Usage {
	if u == nil {
		return nil
	}
	return &llm.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		CachedTokens:    u.PromptTokensDetails.CachedTokens,
	}
}

func (m wireMessage) reasoning() string {
	if m.ReasoningContent != "" {
		return m.ReasoningContent
	}
	return m.Reasoning
}

func parseSSE(t *testing.T, body string) outcome {
	t.Helper()
	var o outcome
	byIndex := map[int]int{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "[DONE]" {
			continue
		}
		var b wireBody
		if err := json.Unmarshal([]byte(data), &b); err != nil {
			t.Fatalf("recorded event %q: %v", data, err)
		}
		if b.Usage != nil {
			o.Usage = b.Usage.usage()
		}
		for _, ch := range b.Choices {
			o.Text += ch.Delta.Content
			o.Reasoning += ch.Delta.reasoning()
			for _, tc := range ch.Delta.ToolCalls {
				pos, ok := byIndex[*tc.Index]
				if !ok {
					o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name})
					pos = len(o.ToolCalls) - 1
					byIndex[*tc.Index] = pos
				}
				o.ToolCalls[pos].Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				o.Finish = ch.FinishReason
			}
		}
	}
	return o
}

func parseJSON(t *testing.T, body string) outcome {
	t.Helper()
	var b wireBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("recorded body: %v", err)
	}
	m := b.Choices[0].Message
	o := outcome{Text: m.Content, Reasoning: m.reasoning(), Usage: b.Usage.usage(), Finish: b.Choices[0].FinishReason}
	for _, tc := range m.ToolCalls {
		o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return o
}
