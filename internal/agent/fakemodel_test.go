package agent

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/massgen/massgen/internal/llm"
)

// reply is one scripted model response.
type reply struct {
	text      string
	reasoning string
	calls     []llm.ToolCall
	usage     llm.Usage
	err       error // returned after the text, instead of the calls
	// during runs while the response streams, before its calls are sent:
	// a test uses it to deliver something "while the model is thinking".
	during func()
}

// fakeModel is an llm.Model that answers each call with the next scripted
// reply and records every request it received (deep-copied, so later
// changes by the caller do not show).
type fakeModel struct {
	mu      sync.Mutex
	replies []reply
	reqs    []llm.Request
}

func script(rs ...reply) *fakeModel { return &fakeModel{replies: rs} }

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, cloneRequest(*req))
	var r reply
	scripted := n < len(f.replies)
	if scripted {
		r = f.replies[n]
	}
	f.mu.Unlock()
	return func(yield func(llm.Chunk, error) bool) {
		if !scripted {
			yield(llm.Chunk{}, fmt.Errorf("fake model: no scripted reply for call %d", n+1))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		if r.reasoning != "" && !yield(llm.Chunk{Kind: llm.ChunkReasoning, Text: r.reasoning}, nil) {
			return
		}
		if r.text != "" && !yield(llm.Chunk{Kind: llm.ChunkText, Text: r.text}, nil) {
			return
		}
		if r.during != nil {
			r.during()
		}
		if r.err != nil {
			yield(llm.Chunk{}, r.err)
			return
		}
		for i := range r.calls {
			c := r.calls[i]
			if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		u := r.usage
		if !yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: &u}, nil) {
			return
		}
		yield(llm.Chunk{Kind: llm.ChunkDone, FinishReason: "stop"}, nil)
	}
}

func cloneRequest(r llm.Request) llm.Request {
	r.Messages = slices.Clone(r.Messages)
	for i := range r.Messages {
		r.Messages[i].ToolCalls = slices.Clone(r.Messages[i].ToolCalls)
	}
	r.Tools = slices.Clone(r.Tools)
	return r
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// recordingEmitter keeps what was streamed.
type recordingEmitter struct {
	mu              sync.Mutex
	text, reasoning []string
}

func (e *recordingEmitter) Text(s string) {
	e.mu.Lock()
	e.text = append(e.text, s)
	e.mu.Unlock()
}

func (e *recordingEmitter) Reasoning(s string) {
	e.mu.Lock()
	e.reasoning = append(e.reasoning, s)
	e.mu.Unlock()
}
