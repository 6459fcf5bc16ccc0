package anthropic

import (
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// thinkingMemory keeps the signed thinking blocks of recent responses,
// keyed by the id of the tool call they led to.
//
// Why: with extended thinking on, the Messages API refuses a tool loop
// whose last assistant turn lacks the thinking blocks, with their
// signatures, that came before its tool_use blocks. llm.Message carries text
// and tool calls only, so the adapter remembers the blocks itself and puts
// them back when the same tool call ids come round in the next request.
// Tool-use ids are unique, so a remembered block can only return to the
// turn it came from. The memory is bounded: only the latest calls matter.
type thinkingMemory struct {
	mu     sync.Mutex
	byCall map[string][]thought
	order  []string // ids in insertion order, oldest first
}

// thought is one thinking or redacted_thinking block.
type thought struct {
	thinking, signature string
	redacted            string // data of a redacted_thinking block
}

// maxRememberedCalls bounds the memory: a tool loop needs only its latest
// response back, and a model serves one agent at a time in practice.
const maxRememberedCalls = 256

func newThinkingMemory() *thinkingMemory {
	return &thinkingMemory{byCall: map[string][]thought{}}
}

func (t *thinkingMemory) remember(callID string, blocks []thought) {
	if t == nil || callID == "" || len(blocks) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.byCall[callID]; !ok {
		t.order = append(t.order, callID)
	}
	t.byCall[callID] = blocks
	for len(t.order) > maxRememberedCalls {
		delete(t.byCall, t.order[0])
		t.order = t.order[1:]
	}
}

// recall returns the blocks that preceded callID, as request content.
func (t *thinkingMemory) recall(callID string) []anthropic.ContentBlockParamUnion {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	blocks := t.byCall[callID]
	t.mu.Unlock()
	out := make([]anthropic.ContentBlockParamUnion, 0, len(blocks))
	for _, b := range blocks {
		if b.redacted != "" {
			out = append(out, anthropic.ContentBlockParamUnion{OfRedactedThinking: &anthropic.RedactedThinkingBlockParam{Data: b.redacted}})
			continue
		}
		out = append(out, anthropic.ContentBlockParamUnion{OfThinking: &anthropic.ThinkingBlockParam{Thinking: b.thinking, Signature: b.signature}})
	}
	return out
}
