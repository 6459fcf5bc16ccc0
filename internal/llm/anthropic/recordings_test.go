package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
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

func TestAnthropicCommon(t *testing.T) { replayFolder(t, "TestAnthropicCommon", false) }
func TestAnthropicCommonWithCacheControl(t *testing.T) {
	replayFolder(t, "TestAnthropicCommonWithCacheControl", false)
}
func TestAnthropicThinking(t *testing.T) { replayFolder(t, "TestAnthropicThinking", true) }
func TestAnthropicThinkingWithCacheControl(t *testing.T) {
	replayFolder(t, "TestAnthropicThinkingWithCacheControl", true)
}

// TestAnthropicWebSearch replays the server-side search recordings for
// text, usage and the stop reason: the search runs at Anthropic, so its
// server_tool_use blocks must not come out as tool calls.
func TestAnthropicWebSearch(t *testing.T) { replayFolder(t, "TestAnthropicWebSearch", false) }

// replayFolder replays every interaction of every recording under folder,
// in order and through one model per file, as an agent's tool loop would.
// For each it checks what the adapter makes of the recorded response, and
// that the request the adapter sends for the recorded conversation is the
// recorded request (up to cache_control placement and `stream`). thinking
// says the first response of each file must carry reasoning.
func replayFolder(t *testing.T, folder string, thinking bool) {
	dir := filepath.Join(llmtest.RecordingsDir, folder)
	files := llmtest.Recordings(t, folder+"/*/*.yaml", folder+"/*.yaml")
	for _, file := range files {
		name, _ := filepath.Rel(dir, file)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			c := llmtest.LoadCassette(t, file)
			srv := &replayServer{}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			m := New(Options{Provider: "replay", BaseURL: hs.URL, APIKey: "k", HTTPClient: hs.Client()})
			for i, it := range c.Interactions {
				if !strings.HasSuffix(it.Request.URL, "/v1/messages") {
					t.Logf("interaction %d is not Messages (%s); skipped", i, it.Request.URL)
					continue
				}
				var recorded map[string]any
				if err := json.Unmarshal([]byte(it.Request.Body), &recorded); err != nil {
					t.Fatalf("interaction %d: request body: %v", i, err)
				}
				req, comparable := toRequest(recorded)
				srv.set(it.Response.Code, it.Response.Headers, it.Response.Body)

				var want outcome
				if isJSON(first(it.Response.Headers["Content-Type"])) {
					want = parseJSON(t, it.Response.Body)
				} else {
					want = parseSSE(t, it.Response.Body)
				}
				got := run(t, m, req)
				if diff := cmp.Diff(compact(t, want), compact(t, got)); diff != "" {
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
				if i == 0 && thinking && got.Reasoning == "" {
					t.Errorf("thinking: no reasoning in the first response")
				}

				sent := srv.lastBody(t)
				if sent["model"] != recorded["model"] || sent["stream"] != true {
					t.Errorf("interaction %d: sent model %v stream %v", i, sent["model"], sent["stream"])
				}
				checkCacheBreakpoints(t, i, sent)
				if !comparable {
					continue
				}
				delete(recorded, "stream")
				delete(sent, "stream")
				if diff := cmp.Diff(stripCacheControl(recorded), stripCacheControl(sent)); diff != "" {
					t.Errorf("interaction %d: request differs from the recorded one (-recording +adapter):\n%s", i, diff)
				}
			}
		})
	}
}

// replayServer answers every request with the response set last, and keeps
// the request body.
type replayServer struct {
	mu      sync.Mutex
	code    int
	headers map[string][]string
	body    string
	got     []byte
}

func (s *replayServer) set(code int, headers map[string][]string, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code, s.headers, s.body, s.got = code, headers, body, nil
}

func (s *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = got
	if r.URL.Path != "/v1/messages" {
		http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
		return
	}
	for k, vs := range s.headers {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(s.code)
	_, _ = io.WriteString(w, s.body)
}

func (s *replayServer) lastBody(t *testing.T) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var body map[string]any
	if err := json.Unmarshal(s.got, &body); err != nil {
		t.Fatalf("request body the adapter sent: %v", err)
	}
	return body
}

// run streams req through m and sums up the chunks.
func run(t *testing.T, m llm.Model, req *llm.Request) outcome {
	t.Helper()
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
	return got
}

// toRequest turns a recorded Messages request into the llm.Request an
// agent would have made for the same conversation. Thinking blocks are left
// out: llm.Message cannot carry them, and the adapter must restore them
// itself. comparable is false when the conversation holds something llm
// cannot express (server tools and their results).
func toRequest(rec map[string]any) (req *llm.Request, comparable bool) {
	req = &llm.Request{Params: map[string]any{}}
	req.Model, _ = rec["model"].(string)
	comparable = true
	for k, v := range rec {
		switch k {
		case "model", "messages", "system", "tools", "stream":
		default:
			req.Params[k] = v
		}
	}
	if sys, ok := rec["system"].([]any); ok {
		var parts []string
		for _, b := range sys {
			parts = append(parts, b.(map[string]any)["text"].(string))
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: strings.Join(parts, "\n\n")})
	}
	for _, raw := range rec["messages"].([]any) {
		msg := raw.(map[string]any)
		role := msg["role"].(string)
		blocks, ok := msg["content"].([]any)
		if !ok {
			blocks = []any{map[string]any{"type": "text", "text": msg["content"]}}
		}
		assistant := llm.Message{Role: llm.RoleAssistant}
		for _, rb := range blocks {
			b := rb.(map[string]any)
			switch b["type"] {
			case "text":
				if role == "assistant" {
					assistant.Content += b["text"].(string)
				} else {
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: b["text"].(string)})
				}
			case "tool_use":
				args, _ := json.Marshal(b["input"])
				assistant.ToolCalls = append(assistant.ToolCalls, llm.ToolCall{ID: b["id"].(string), Name: b["name"].(string), Arguments: string(args)})
			case "tool_result":
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: b["tool_use_id"].(string), Content: resultText(b["content"])})
			case "thinking", "redacted_thinking":
			default:
				comparable = false
			}
		}
		if role == "assistant" {
			req.Messages = append(req.Messages, assistant)
		}
	}
	for _, raw := range asSlice(rec["tools"]) {
		tl := raw.(map[string]any)
		if typ, ok := tl["type"]; ok && typ != "custom" {
			// A server tool (web search): not an llm.ToolDef.
			comparable = false
			continue
		}
		def := llm.ToolDef{Name: tl["name"].(string), Parameters: tl["input_schema"].(map[string]any)}
		def.Description, _ = tl["description"].(string)
		req.Tools = append(req.Tools, def)
	}
	return req, comparable
}

func resultText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var out string
	for _, b := range asSlice(v) {
		out += b.(map[string]any)["text"].(string)
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// stripCacheControl drops every cache_control: the recordings' client puts
// its breakpoints elsewhere (checkCacheBreakpoints checks ours).
func stripCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "cache_control" {
				out[k] = stripCacheControl(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripCacheControl(e)
		}
		return out
	}
	return v
}

// checkCacheBreakpoints checks that the sent request marks exactly the
// system prompt and the last text block of the first user message.
func checkCacheBreakpoints(t *testing.T, i int, sent map[string]any) {
	t.Helper()
	var marked []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "cache_control" {
					marked = append(marked, path)
					continue
				}
				walk(path+"."+k, e)
			}
		case []any:
			for j, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, j), e)
			}
		}
	}
	walk("", sent)
	firstUser := asSlice(asSlice(sent["messages"])[0].(map[string]any)["content"])
	want := []string{fmt.Sprintf(".messages[0].content[%d]", len(firstUser)-1)}
	if sent["system"] != nil {
		want = append(want, ".system[0]")
	}
	if diff := cmp.Diff(want, marked, cmpSorted); diff != "" {
		t.Errorf("interaction %d: cache breakpoints (-want +got):\n%s", i, diff)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for a := range out {
		for b := a + 1; b < len(out); b++ {
			if out[b] < out[a] {
				out[a], out[b] = out[b], out[a]
			}
		}
	}
	return out
})

// compact normalises tool-call arguments (a whole JSON message and a stream
// space them differently) after checking they parse.
func compact(t *testing.T, o outcome) outcome {
	t.Helper()
	calls := make([]llm.ToolCall, len(o.ToolCalls))
	for i, c := range o.ToolCalls {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(c.Arguments)); err != nil {
			t.Errorf("tool call %s: arguments %q are not JSON: %v", c.ID, c.Arguments, err)
		}
		c.Arguments = b.String()
		calls[i] = c
	}
	o.ToolCalls = calls
	return o
}

// wire types for the test's own reading of recordings.
type (
	wireCounts struct {
		InputTokens         *int64 `json:"input_tokens"`
		CacheCreation       *int64 `json:"cache_creation_input_tokens"`
		CacheRead           *int64 `json:"cache_read_input_tokens"`
		OutputTokens        *int64 `json:"output_tokens"`
		OutputTokensDetails *struct {
			ThinkingTokens int64 `json:"thinking_tokens"`
		} `json:"output_tokens_details"`
	}
	wireBlock struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
	}
	wireMessage struct {
		Content    []wireBlock `json:"content"`
		StopReason string      `json:"stop_reason"`
		Usage      wireCounts  `json:"usage"`
	}
	wireEvent struct {
		Type         string      `json:"type"`
		Index        int         `json:"index"`
		Message      wireMessage `json:"message"`
		ContentBlock wireBlock   `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Thinking    string `json:"thinking"`
			PartialJSON string `json:"partial_json"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
		Usage *wireCounts `json:"usage"`
	}
)

// merge takes the counts u has into w.
func (w *wireCounts) merge(u *wireCounts) {
	for _, p := range []struct{ dst, src **int64 }{
		{&w.InputTokens, &u.InputTokens}, {&w.CacheCreation, &u.CacheCreation},
		{&w.CacheRead, &u.CacheRead}, {&w.OutputTokens, &u.OutputTokens},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	if u.OutputTokensDetails != nil {
		w.OutputTokensDetails = u.OutputTokensDetails
	}
}

func (w wireCounts) usage() *llm.Usage {
	n := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	u := &llm.Usage{
		InputTokens:  n(w.InputTokens) + n(w.CacheCreation) + n(w.CacheRead),
		OutputTokens: n(w.OutputTokens),
		CachedTokens: n(w.CacheRead),
		// Cache writes are billed apart, so they are reported apart too.
		CacheWriteTokens: n(w.CacheCreation),
	}
	if w.OutputTokensDetails != nil {
		u.ReasoningTokens = w.OutputTokensDetails.ThinkingTokens
	}
	return u
}

func parseSSE(t *testing.T, body string) outcome {
	t.Helper()
	var o outcome
	var counts wireCounts
	calls := map[int]int{} // block index → position in o.ToolCalls
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev wireEvent
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			t.Fatalf("recorded event %q: %v", data, err)
		}
		switch ev.Type {
		case "message_start":
			counts = ev.Message.Usage
		case "message_delta":
			if ev.Usage != nil {
				counts.merge(ev.Usage)
			}
			o.Finish = ev.Delta.StopReason
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				calls[ev.Index] = len(o.ToolCalls)
				o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
			}
		case "content_block_delta":
			o.Text += ev.Delta.Text
			o.Reasoning += ev.Delta.Thinking
			if pos, ok := calls[ev.Index]; ok {
				o.ToolCalls[pos].Arguments += ev.Delta.PartialJSON
			}
		}
	}
	o.Usage = counts.usage()
	return o
}

func parseJSON(t *testing.T, body string) outcome {
	t.Helper()
	var msg wireMessage
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("recorded body: %v", err)
	}
	o := outcome{Usage: msg.Usage.usage(), Finish: msg.StopReason}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			o.Text += b.Text
		case "thinking":
			o.Reasoning += b.Thinking
		case "tool_use":
			o.ToolCalls = append(o.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		}
	}
	return o
}
