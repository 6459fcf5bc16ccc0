package chatcompat

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/massgen/massgen/internal/llm"
)

// accumulator turns a sequence of streamed ChatCompletionChunks into
// llm.Chunks. Text and reasoning deltas go out as they arrive; tool calls,
// usage and the finish reason are held until the response is over, because a
// tool call is only usable once its arguments are whole.
type accumulator struct {
	calls []*llm.ToolCall
	// args[i] gathers the argument fragments of calls[i] (nil for a call
	// that arrived whole): appending each fragment to a string would copy
	// the arguments so far every time, quadratic in a long answer.
	args    []*strings.Builder
	byIndex map[int64]int // tool-call index on the wire → position in calls
	usage   *llm.Usage
	finish  string
}

// add takes one chunk and returns the deltas to yield now.
func (a *accumulator) add(c openai.ChatCompletionChunk) []llm.Chunk {
	// Usage comes on the last chunk (include_usage) and, with some servers,
	// also on the chunk that carries finish_reason; the last one counts.
	if c.JSON.Usage.Valid() {
		u := usage(c.Usage)
		a.usage = &u
	}
	var out []llm.Chunk
	for _, ch := range c.Choices {
		// Only the first choice is ours: massgen never asks for n > 1.
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if r := reasoning(d.JSON.ExtraFields); r != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkReasoning, Text: r})
		}
		if d.Content != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: d.Content})
		}
		if d.Refusal != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			if c, ok := a.addToolCall(tc); ok {
				out = append(out, c)
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return out
}

// addToolCall merges one tool-call fragment. The id and name arrive with the
// first fragment of a call, the arguments are split over any number of them,
// and several calls interleave by index. A fragment of arguments also goes
// out at once as a ChunkToolArgs, for displays.
func (a *accumulator) addToolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) (llm.Chunk, bool) {
	if a.byIndex == nil {
		a.byIndex = map[int64]int{}
	}
	pos, seen := a.byIndex[tc.Index]
	if !tc.JSON.Index.Valid() && len(a.calls) > 0 {
		// A server that omits the index continues the last call.
		pos, seen = len(a.calls)-1, true
	}
	// A fresh id at a known index is a new call: some servers number every
	// call 0.
	if seen && tc.ID != "" && a.calls[pos].ID != "" && a.calls[pos].ID != tc.ID {
		seen = false
	}
	if !seen {
		a.calls = append(a.calls, &llm.ToolCall{})
		a.args = append(a.args, &strings.Builder{})
		pos = len(a.calls) - 1
		a.byIndex[tc.Index] = pos
	}
	call := a.calls[pos]
	if call.ID == "" {
		call.ID = tc.ID
	}
	if call.Name == "" {
		call.Name = tc.Function.Name
	}
	a.args[pos].WriteString(tc.Function.Arguments)
	if tc.Function.Arguments == "" {
		return llm.Chunk{}, false
	}
	return llm.Chunk{Kind: llm.ChunkToolArgs, Text: tc.Function.Arguments, ToolCall: &llm.ToolCall{ID: call.ID, Name: call.Name}}, true
}

// finished reports whether the response said why it ended.
func (a *accumulator) finished() bool { return a.finish != "" }

// final returns the held chunks: complete tool calls, usage, then done.
func (a *accumulator) final() []llm.Chunk {
	out := make([]llm.Chunk, 0, len(a.calls)+2)
	for i, c := range a.calls {
		if b := a.args[i]; b != nil {
			c.Arguments = b.String()
		}
		out = append(out, llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: c})
	}
	if a.usage != nil {
		out = append(out, llm.Chunk{Kind: llm.ChunkUsage, Usage: a.usage})
	}
	finish := a.finish
	if finish == "" {
		// Ended by [DONE] without a finish reason.
		finish = "stop"
		if len(a.calls) > 0 {
			finish = "tool_calls"
		}
	}
	return append(out, llm.Chunk{Kind: llm.ChunkDone, FinishReason: finish})
}

// completionChunks yields a non-streamed response in stream order.
func completionChunks(res *openai.ChatCompletion) []llm.Chunk {
	var a accumulator
	var out []llm.Chunk
	if res.JSON.Usage.Valid() {
		u := usage(res.Usage)
		a.usage = &u
	}
	for _, ch := range res.Choices {
		if ch.Index != 0 {
			continue
		}
		msg := ch.Message
		if r := reasoning(msg.JSON.ExtraFields); r != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkReasoning, Text: r})
		}
		if msg.Content != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: msg.Content})
		}
		if msg.Refusal != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: msg.Refusal})
		}
		for _, tc := range msg.ToolCalls {
			a.calls = append(a.calls, &llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			a.args = append(a.args, nil)
		}
		a.finish = ch.FinishReason
		break
	}
	return append(out, a.final()...)
}

// reasoning reads the reasoning text that compatible servers add beside
// content: `reasoning_content` (DeepSeek, vLLM, llama.cpp, xAI, Z.ai, Kimi)
// or `reasoning` (OpenRouter, Ollama). The SDK has no field for either, so
// it comes from the raw JSON. Some servers send both with the same text;
// reasoning_content wins so it is not shown twice.
func reasoning(extra map[string]respjson.Field) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		// The SDK marks every extra field "invalid" (it has no type to
		// check it against), so presence is judged from the raw text.
		raw := extra[key].Raw()
		if raw == "" || raw == respjson.Null {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func usage(u openai.CompletionUsage) llm.Usage {
	return llm.Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		CachedTokens:    u.PromptTokensDetails.CachedTokens,
	}
}
