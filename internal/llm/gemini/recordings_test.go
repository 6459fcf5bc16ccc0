package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// call is a tool call with its arguments decoded, so that key order and
// spacing do not matter.
type call struct {
	ID   string
	Name string
	Args any
}

// outcome is what a response amounts to, computed once from the recording by
// the test's own parser and once through the adapter.
type outcome struct {
	Text      string
	Reasoning string
	ToolCalls []call
	Usage     *llm.Usage
	Finish    string
}

// TestGoogleCommon replays the Gemini API recordings (the vertex-* folders
// are another API and are not served by this adapter).
func TestGoogleCommon(t *testing.T) { replayFolder(t, "TestGoogleCommon", false) }

func TestGoogleThinking(t *testing.T) { replayFolder(t, "TestGoogleThinking", true) }

// replayFolder serves every interaction of every gemini-* recording under
// folder and checks both what the adapter makes of the response and that it
// sends the same conversation the real API accepted. thinking says the first
// response of each file must report reasoning tokens.
func replayFolder(t *testing.T, folder string, thinking bool) {
	files := llmtest.Recordings(t, folder+"/gemini-*/*.yaml")
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file)) + "/" + strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			c := llmtest.LoadCassette(t, file)
			for i, it := range c.Interactions {
				model, streamed := recordedEndpoint(t, it.Request.URL)
				body := it.Response.Body
				if !streamed {
					// A generateContent answer is the same object a stream
					// carries; the adapter always streams, so it is served as
					// one event.
					var buf bytes.Buffer
					if err := json.Compact(&buf, []byte(body)); err != nil {
						t.Fatalf("interaction %d: response body: %v", i, err)
					}
					body = sse(buf.String())
				}
				var sent sentRequest
				req, wantWire := requestFromRecording(t, it.Request.Body)
				got := replay(t, model, it.Response.Code, body, req, &sent)
				want := parseSSE(t, body)
				normalizeIDs(t, &want, &got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("interaction %d (stream=%v): outcome mismatch (-recording +adapter):\n%s", i, streamed, diff)
				}
				if got.Usage == nil || got.Usage.InputTokens == 0 || got.Usage.OutputTokens == 0 {
					t.Errorf("interaction %d: usage missing: %+v", i, got.Usage)
				} else if total := recordedTotal(t, body); got.Usage.Total() != total {
					t.Errorf("interaction %d: input+output = %d, recorded totalTokenCount %d", i, got.Usage.Total(), total)
				}
				if i == 0 && strings.HasPrefix(filepath.Base(file), "multi_tool") && len(got.ToolCalls) < 2 {
					t.Errorf("multi_tool: got %d tool calls, want at least 2", len(got.ToolCalls))
				}
				if i == 0 && thinking && (got.Usage == nil || got.Usage.ReasoningTokens == 0) {
					t.Errorf("thinking: no reasoning tokens in the first response")
				}

				// The request: same path, and the same conversation as the
				// one the real API answered.
				if want := "/v1beta/models/" + model + ":streamGenerateContent"; sent.path != want || sent.query != "alt=sse" {
					t.Errorf("interaction %d: request %s?%s, want %s?alt=sse", i, sent.path, sent.query, want)
				}
				if !enforcesSignatures(model) {
					// Gemini 2.x gave no call ids, so the recorded ids ("1",
					// "2", chosen by the recording client) are not the ids
					// the adapter saw signatures for: nothing to send back.
					dropSignatures(wantWire["contents"])
				}
				for _, key := range []string{"contents", "systemInstruction", "generationConfig", "tools"} {
					if diff := cmp.Diff(wantWire[key], sent.body[key]); diff != "" {
						t.Errorf("interaction %d: request %s (-recording +adapter):\n%s", i, key, diff)
					}
				}
			}
		})
	}
}

// recordedEndpoint returns the model of a recorded request URL and whether
// it was a streaming call.
func recordedEndpoint(t *testing.T, url string) (model string, streamed bool) {
	t.Helper()
	_, rest, ok := strings.Cut(url, "/models/")
	if !ok {
		t.Fatalf("unexpected recorded URL %s", url)
	}
	model, method, _ := strings.Cut(rest, ":")
	switch {
	case strings.HasPrefix(method, "streamGenerateContent"):
		return model, true
	case method == "generateContent":
		return model, false
	}
	t.Fatalf("unexpected recorded URL %s", url)
	return "", false
}

type sentRequest struct {
	path, query string
	body        map[string]any
}

// replay serves one recorded response and runs req through the adapter.
func replay(t *testing.T, model string, code int, body string, req *llm.Request, sent *sentRequest) outcome {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.path, sent.query = r.URL.Path, r.URL.RawQuery
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &sent.body); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()

	m := New(Options{Provider: "replay", BaseURL: srv.URL, APIKey: "k", Model: model, HTTPClient: srv.Client()})
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
			var args any
			if err := json.Unmarshal([]byte(c.ToolCall.Arguments), &args); err != nil {
				t.Errorf("tool call %s: arguments %q are not JSON: %v", c.ToolCall.Name, c.ToolCall.Arguments, err)
			}
			got.ToolCalls = append(got.ToolCalls, call{ID: c.ToolCall.ID, Name: c.ToolCall.Name, Args: args})
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

// normalizeIDs checks the ids the adapter made up for calls the API sent
// without one, then blanks them so the outcomes compare.
func normalizeIDs(t *testing.T, want, got *outcome) {
	t.Helper()
	if len(want.ToolCalls) != len(got.ToolCalls) {
		return // the diff shows it
	}
	for i := range want.ToolCalls {
		if want.ToolCalls[i].ID == "" {
			if !strings.HasPrefix(got.ToolCalls[i].ID, "call_") {
				t.Errorf("tool call %d: made-up id %q, want call_<n>", i, got.ToolCalls[i].ID)
			}
			got.ToolCalls[i].ID = ""
		}
	}
}

// wire types for the test's own reading of recordings.
type (
	wirePart struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		FunctionCall *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			Args any    `json:"args"`
		} `json:"functionCall"`
	}
	wireUsage struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
	}
	wireResponse struct {
		Candidates []struct {
			Content struct {
				Parts []wirePart `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		UsageMetadata *wireUsage `json:"usageMetadata"`
	}
)

func events(t *testing.T, body string) []wireResponse {
	t.Helper()
	var out []wireResponse
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var r wireResponse
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("recorded event %q: %v", data, err)
		}
		out = append(out, r)
	}
	return out
}

func parseSSE(t *testing.T, body string) outcome {
	t.Helper()
	var o outcome
	finish := ""
	for _, r := range events(t, body) {
		if u := r.UsageMetadata; u != nil {
			o.Usage = &llm.Usage{
				InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
				OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
				ReasoningTokens: u.ThoughtsTokenCount,
				CachedTokens:    u.CachedContentTokenCount,
			}
		}
		for _, c := range r.Candidates {
			for _, p := range c.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					args := p.FunctionCall.Args
					if args == nil {
						args = map[string]any{}
					}
					o.ToolCalls = append(o.ToolCalls, call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args})
				case p.Thought:
					o.Reasoning += p.Text
				default:
					o.Text += p.Text
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if finish != "STOP" {
		t.Fatalf("recording ends with finish reason %q; this test only knows STOP", finish)
	}
	o.Finish = "stop"
	if len(o.ToolCalls) > 0 {
		o.Finish = "tool_calls"
	}
	return o
}

func recordedTotal(t *testing.T, body string) int64 {
	var total int64
	for _, r := range events(t, body) {
		if r.UsageMetadata != nil {
			total = r.UsageMetadata.TotalTokenCount
		}
	}
	return total
}

// requestFromRecording rebuilds the neutral request behind a recorded
// request body, and returns the parts of that body the adapter's own request
// must match: contents (consecutive contents of one role merged, as the
// adapter sends them), systemInstruction, generationConfig, and tools (with
// the recorded OpenAPI-style `parameters` as the JSON Schema the adapter
// sends in parametersJsonSchema).
func requestFromRecording(t *testing.T, body string) (*llm.Request, map[string]any) {
	t.Helper()
	var wire map[string]any
	if err := json.Unmarshal([]byte(body), &wire); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	req := &llm.Request{Params: map[string]any{}}

	// System instruction.
	if si, ok := wire["systemInstruction"].(map[string]any); ok {
		for _, p := range si["parts"].([]any) {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: p.(map[string]any)["text"].(string)})
		}
	}

	// Contents.
	var merged []any
	for _, c := range wire["contents"].([]any) {
		c := c.(map[string]any)
		if n := len(merged); n > 0 && merged[n-1].(map[string]any)["role"] == c["role"] {
			prev := merged[n-1].(map[string]any)
			prev["parts"] = append(prev["parts"].([]any), c["parts"].([]any)...)
			continue
		}
		merged = append(merged, map[string]any{"role": c["role"], "parts": append([]any(nil), c["parts"].([]any)...)})
	}
	wire["contents"] = merged
	for _, c := range merged {
		c := c.(map[string]any)
		var text string
		var calls []llm.ToolCall
		for _, p := range c["parts"].([]any) {
			p := p.(map[string]any)
			switch {
			case p["functionCall"] != nil:
				fc := p["functionCall"].(map[string]any)
				args, _ := json.Marshal(fc["args"])
				calls = append(calls, llm.ToolCall{ID: fc["id"].(string), Name: fc["name"].(string), Arguments: string(args)})
			case p["functionResponse"] != nil:
				fr := p["functionResponse"].(map[string]any)
				res, _ := json.Marshal(fr["response"])
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: fr["id"].(string), Content: string(res)})
			default:
				text += p["text"].(string)
			}
		}
		switch {
		case c["role"] == "model":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: calls})
		case text != "":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		}
	}

	// Tools.
	if tools, ok := wire["tools"].([]any); ok {
		for _, tool := range tools {
			for _, d := range tool.(map[string]any)["functionDeclarations"].([]any) {
				d := d.(map[string]any)
				schema := lowerTypes(d["parameters"]).(map[string]any)
				delete(d, "parameters")
				d["parametersJsonSchema"] = schema
				req.Tools = append(req.Tools, llm.ToolDef{Name: d["name"].(string), Description: d["description"].(string), Parameters: schema})
			}
		}
	}

	// Generation config, as MassGen parameters.
	if gc, ok := wire["generationConfig"].(map[string]any); ok {
		for k, v := range gc {
			switch k {
			case "maxOutputTokens":
				req.Params["max_output_tokens"] = v
			case "thinkingConfig":
				req.Params["thinking_config"] = v
			default:
				t.Fatalf("recorded generationConfig key %q not mapped by the test", k)
			}
		}
	}
	return req, wire
}

// lowerTypes turns Google's OpenAPI type names (OBJECT, INTEGER) into JSON
// Schema's.
func lowerTypes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if s, ok := x.(string); ok && k == "type" {
				out[k] = strings.ToLower(s)
				continue
			}
			out[k] = lowerTypes(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = lowerTypes(x)
		}
		return out
	}
	return v
}

func dropSignatures(contents any) {
	for _, c := range contents.([]any) {
		for _, p := range c.(map[string]any)["parts"].([]any) {
			delete(p.(map[string]any), "thoughtSignature")
		}
	}
}
