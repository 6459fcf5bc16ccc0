package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// fakeModel is an in-memory llm.Model for tests that need a model but not
// the HTTP path: it runs inside a testing/synctest bubble, so deadlines,
// backoffs and timeouts take no real time. By default it behaves like the
// simulator's default policy — a coordination turn answers when it sees no
// answers and votes for agent1 otherwise; a presentation writes text; a
// post-evaluation submits — and scripted replies take over call by call.
type fakeModel struct {
	id     string
	mu     sync.Mutex
	steps  []fakeReply // consumed in order, each by the first call of its kind
	always *fakeReply  // when set, every call gets it
	// outage makes every call fail with outageErr while it lasts (until
	// outageEnd, or for the first outageCalls calls).
	outageErr   error
	outageEnd   time.Time
	outageCalls int
	calls       []fakeCall
}

// fakeReply is one scripted response.
type fakeReply struct {
	when    string        // "" any call, or turn|presentation|evaluation|direct
	answer  string        // new_answer content
	vote    string        // vote label
	text    string        // plain text (presentation)
	restart string        // restart_orchestration reason (evaluation)
	err     error         // fail after the delay
	hang    bool          // never answer: wait for cancellation
	delay   time.Duration // before the response
}

// fakeCall is what the model saw and how the call ended.
type fakeCall struct {
	kind      string
	cancelled bool // the caller gave up before the response was complete
	at        time.Time
}

func fake(id string, steps ...fakeReply) *fakeModel { return &fakeModel{id: id, steps: steps} }

func fakeAlways(id string, r fakeReply) *fakeModel { return &fakeModel{id: id, always: &r} }

// fakeTeam returns one agent per model, with the model's id.
func fakeTeam(models ...*fakeModel) []Agent {
	var out []Agent
	for _, m := range models {
		out = append(out, Agent{ID: m.id, Backend: "fake", ModelName: "fake-" + m.id, Model: m})
	}
	return out
}

func (f *fakeModel) record() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeModel) kinds() []string {
	var k []string
	for _, c := range f.record() {
		k = append(k, c.kind)
	}
	return k
}

func callKind(req *llm.Request) string {
	names := map[string]bool{}
	for _, t := range req.Tools {
		names[t.Name] = true
	}
	switch {
	case names[coord.ToolSubmit]:
		return "evaluation"
	case names[coord.ToolNewAnswer]:
		return "turn"
	case len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, "winning presenter"):
		return "presentation"
	}
	return "direct"
}

func (f *fakeModel) next(kind string) fakeReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outageErr != nil && (time.Now().Before(f.outageEnd) || len(f.calls) < f.outageCalls) {
		return fakeReply{err: f.outageErr}
	}
	if f.always != nil {
		return *f.always
	}
	if len(f.steps) > 0 && (f.steps[0].when == "" || f.steps[0].when == kind) {
		r := f.steps[0]
		f.steps = f.steps[1:]
		return r
	}
	return fakeReply{}
}

func (f *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	kind := callKind(req)
	r := f.next(kind)
	f.mu.Lock()
	i := len(f.calls)
	f.calls = append(f.calls, fakeCall{kind: kind, at: time.Now()})
	f.mu.Unlock()
	ended := func(cancelled bool) {
		f.mu.Lock()
		f.calls[i].cancelled = cancelled
		f.mu.Unlock()
	}
	return func(yield func(llm.Chunk, error) bool) {
		wait := r.delay
		if r.hang {
			wait = time.Duration(1<<63 - 1)
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				ended(true)
				yield(llm.Chunk{}, ctx.Err())
				return
			}
		}
		if r.err != nil {
			yield(llm.Chunk{}, r.err)
			return
		}
		for _, c := range f.reply(i, kind, r, req) {
			if !yield(c, nil) {
				ended(true)
				return
			}
		}
	}
}

// reply builds the response chunks: the scripted content, or the default
// policy for the call's kind.
func (f *fakeModel) reply(n int, kind string, r fakeReply, req *llm.Request) []llm.Chunk {
	var out []llm.Chunk
	call := func(name string, args any) {
		b, _ := json.Marshal(args)
		out = append(out, llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: fmt.Sprintf("call_%s_%d", f.id, n), Name: name, Arguments: string(b)}})
	}
	switch {
	case r.answer != "":
		call(coord.ToolNewAnswer, map[string]string{"content": r.answer})
	case r.vote != "":
		call(coord.ToolVote, map[string]string{"agent_id": r.vote, "reason": "scripted"})
	case r.restart != "":
		call(coord.ToolRestart, map[string]string{"reason": r.restart, "instructions": "address: " + r.restart})
	case r.text != "":
		out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: r.text})
	case kind == "turn" && len(req.Tools) > 1:
		call(coord.ToolVote, map[string]string{"agent_id": "agent1", "reason": "agent1 is fine"})
	case kind == "turn":
		call(coord.ToolNewAnswer, map[string]string{"content": "answer from " + f.id})
	case kind == "evaluation":
		call(coord.ToolSubmit, map[string]bool{"confirmed": true})
	default:
		out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: "Final answer from " + f.id})
	}
	u := llm.Usage{InputTokens: 10, OutputTokens: 5}
	return append(out, llm.Chunk{Kind: llm.ChunkUsage, Usage: &u}, llm.Chunk{Kind: llm.ChunkDone, FinishReason: "stop"})
}
