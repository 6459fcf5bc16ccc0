package anthropic

import (
	"errors"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/massgen/massgen/internal/llm"
)

// translator turns the events of one Messages stream into llm.Chunks.
//
// Text and thinking deltas go out as they arrive. A tool call goes out when
// its content block stops, with the input JSON assembled from its
// input_json_delta fragments; usage and the stop reason go out at the end.
// The SDK's Message.Accumulate is not used: it replaces an input that does
// not parse with {}, where llm wants the model's own text, and it rebuilds
// the whole message's JSON on every event, which nothing here needs.
type translator struct {
	memory *thinkingMemory

	blocks []*block // by content block index
	usage  wireUsage
	stop   string

	started bool // message_start seen
	stopped bool // message_stop seen
}

// block is the state of one content block.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, or a server block
	id, name  string
	input     strings.Builder // tool_use: the input_json_delta fragments
	start     string          // tool_use: the input object of content_block_start
	thinking  strings.Builder
	signature string
	redacted  string
	emitted   bool // tool_use: yielded
}

// wireUsage holds the counts as the API reports them; llmUsage converts.
type wireUsage struct {
	input, cacheWrite, cacheRead, output, thinking int64
}

// add takes one event and returns the chunks to yield now.
func (t *translator) add(ev anthropic.MessageStreamEventUnion) []llm.Chunk {
	if t.stopped {
		return nil
	}
	switch ev.Type {
	case "message_start":
		t.started = true
		u := ev.Message.Usage
		t.usage = wireUsage{
			input:      u.InputTokens,
			cacheWrite: u.CacheCreationInputTokens,
			cacheRead:  u.CacheReadInputTokens,
			output:     u.OutputTokens,
			thinking:   u.OutputTokensDetails.ThinkingTokens,
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			t.stop = string(ev.Delta.StopReason)
		}
		// Every count in message_delta is a running total for the whole
		// message, so it replaces; counts it leaves out keep their
		// message_start value (as the SDK's Message.Accumulate does).
		u := ev.Usage
		if u.JSON.OutputTokens.Valid() {
			t.usage.output = u.OutputTokens
		}
		if u.JSON.InputTokens.Valid() {
			t.usage.input = u.InputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			t.usage.cacheWrite = u.CacheCreationInputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			t.usage.cacheRead = u.CacheReadInputTokens
		}
		if u.OutputTokensDetails.JSON.ThinkingTokens.Valid() {
			t.usage.thinking = u.OutputTokensDetails.ThinkingTokens
		}
	case "content_block_start":
		cb := ev.ContentBlock
		b := &block{kind: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, redacted: cb.Data}
		if cb.Type == "tool_use" {
			b.start = cb.JSON.Input.Raw()
		}
		t.setBlock(ev.Index, b)
		switch {
		case cb.Type == "text" && cb.Text != "":
			return []llm.Chunk{{Kind: llm.ChunkText, Text: cb.Text}}
		case cb.Type == "thinking" && cb.Thinking != "":
			b.thinking.WriteString(cb.Thinking)
			return []llm.Chunk{{Kind: llm.ChunkReasoning, Text: cb.Thinking}}
		}
	case "content_block_delta":
		b := t.block(ev.Index)
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				return []llm.Chunk{{Kind: llm.ChunkText, Text: d.Text}}
			}
		case "thinking_delta":
			if d.Thinking != "" {
				b.thinking.WriteString(d.Thinking)
				return []llm.Chunk{{Kind: llm.ChunkReasoning, Text: d.Thinking}}
			}
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			b.input.WriteString(d.PartialJSON)
			if d.PartialJSON != "" && b.kind == "tool_use" {
				return []llm.Chunk{{Kind: llm.ChunkToolArgs, Text: d.PartialJSON, ToolCall: &llm.ToolCall{ID: b.id, Name: b.name}}}
			}
		}
	case "content_block_stop":
		if c, ok := t.call(t.block(ev.Index)); ok {
			return []llm.Chunk{c}
		}
	case "message_stop":
		t.stopped = true
	}
	return nil
}

// setBlock records the block at index i, whatever order indices arrive in.
func (t *translator) setBlock(i int64, b *block) {
	if i < 0 || i > 1<<16 {
		return
	}
	for int64(len(t.blocks)) <= i {
		t.blocks = append(t.blocks, nil)
	}
	t.blocks[i] = b
}

// block returns the block at index i; a delta for a block that never
// started gets a throwaway one.
func (t *translator) block(i int64) *block {
	if i >= 0 && i < int64(len(t.blocks)) && t.blocks[i] != nil {
		return t.blocks[i]
	}
	return &block{}
}

// call yields a tool_use block as a complete tool call, once.
func (t *translator) call(b *block) (llm.Chunk, bool) {
	if b.kind != "tool_use" || b.emitted {
		return llm.Chunk{}, false
	}
	b.emitted = true
	args := b.input.String()
	if args == "" {
		// No fragments: the input came whole with content_block_start
		// (`{}` for a call without arguments).
		args = b.start
		if args == "" || args == "null" {
			args = "{}"
		}
	}
	return llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: b.id, Name: b.name, Arguments: args}}, true
}

// finished reports whether the response said why it ended (message_delta)
// or ended (message_stop).
func (t *translator) finished() bool { return t.stopped || t.stop != "" }

// final returns the held chunks: tool calls whose block never stopped,
// usage, then done. It also remembers the response's thinking blocks for
// the next request of the tool loop.
func (t *translator) final() []llm.Chunk {
	var out []llm.Chunk
	calls := 0
	for _, b := range t.blocks {
		if b == nil || b.kind != "tool_use" {
			continue
		}
		calls++
		if c, ok := t.call(b); ok {
			out = append(out, c)
		}
	}
	t.remember()
	if t.started {
		u := t.usage.llmUsage()
		out = append(out, llm.Chunk{Kind: llm.ChunkUsage, Usage: &u})
	}
	return append(out, llm.Chunk{Kind: llm.ChunkDone, FinishReason: finishReason(t.stop, calls)})
}

// remember files each run of thinking blocks under the tool call that
// follows it.
func (t *translator) remember() {
	if t.memory == nil {
		return
	}
	var run []thought
	for _, b := range t.blocks {
		if b == nil {
			continue
		}
		switch b.kind {
		case "thinking":
			run = append(run, thought{thinking: b.thinking.String(), signature: b.signature})
		case "redacted_thinking":
			run = append(run, thought{redacted: b.redacted})
		case "tool_use":
			t.memory.remember(b.id, slices.Clip(run))
			run = nil
		}
	}
}

// finishReason is Anthropic's stop_reason as is (end_turn, tool_use,
// max_tokens, stop_sequence, pause_turn, refusal…). A response that ended
// without one (message_stop alone) is taken as finished by its content.
func finishReason(stop string, calls int) string {
	switch {
	case stop != "":
		return stop
	case calls > 0:
		return string(anthropic.StopReasonToolUse)
	}
	return string(anthropic.StopReasonEndTurn)
}

// llmUsage converts Anthropic's counts. Anthropic's input_tokens leaves out
// the tokens written to and read from the prompt cache; llm.Usage counts
// every prompt token in InputTokens, with the cache reads also in
// CachedTokens (as OpenAI's prompt_tokens and cached_tokens do), so that
// cost = (input - cached) × rate + cached × cache rate holds everywhere.
func (u wireUsage) llmUsage() llm.Usage {
	return llm.Usage{
		InputTokens:     u.input + u.cacheWrite + u.cacheRead,
		OutputTokens:    u.output,
		ReasoningTokens: u.thinking,
		CachedTokens:    u.cacheRead,
		// Written to the cache this time: billed at the cache-write rate.
		CacheWriteTokens: u.cacheWrite,
	}
}

var errNotAMessage = errors.New("the response is not a whole JSON message")

// messageChunks yields a whole (non-streamed) Message in stream order.
func messageChunks(msg *anthropic.Message, memory *thinkingMemory) []llm.Chunk {
	t := translator{memory: memory, started: true, stopped: true, stop: string(msg.StopReason)}
	u := msg.Usage
	t.usage = wireUsage{
		input:      u.InputTokens,
		cacheWrite: u.CacheCreationInputTokens,
		cacheRead:  u.CacheReadInputTokens,
		output:     u.OutputTokens,
		thinking:   u.OutputTokensDetails.ThinkingTokens,
	}
	var out []llm.Chunk
	for _, cb := range msg.Content {
		b := &block{kind: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, redacted: cb.Data}
		t.blocks = append(t.blocks, b)
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: cb.Text})
			}
		case "thinking":
			b.thinking.WriteString(cb.Thinking)
			if cb.Thinking != "" {
				out = append(out, llm.Chunk{Kind: llm.ChunkReasoning, Text: cb.Thinking})
			}
		case "tool_use":
			b.start = string(cb.Input)
		}
	}
	return append(out, t.final()...)
}
