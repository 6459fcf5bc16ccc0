package agent

import (
	"context"
	"encoding/json"
	"iter"
	"runtime"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// benchModel streams canned responses from memory, in order, again from
// the first after Reset: no HTTP, no copying, so the model's own time is as
// small as it can be and is measured on its own (see BenchmarkToolLoop).
type benchModel struct {
	responses [][]llm.Chunk
	next      int
}

func (m *benchModel) Reset() { m.next = 0 }

func (m *benchModel) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	chunks := m.responses[m.next%len(m.responses)]
	m.next++
	return func(yield func(llm.Chunk, error) bool) {
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// benchResponse is a response that makes one call, with usage.
func benchResponse(name, args string) []llm.Chunk {
	return []llm.Chunk{
		{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: "call_" + name, Name: name, Arguments: args}},
		{Kind: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}},
		{Kind: llm.ChunkDone, FinishReason: "tool_calls"},
	}
}

const benchArgs = `{"x":1}`

// noopTool returns at once: what is measured around it is the loop's.
var noopTool = tool.Func(llm.ToolDef{Name: "noop", Description: "Do nothing.",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "number"}}}},
	func(context.Context, json.RawMessage) (string, error) { return "ok", nil })

// benchTurn is a turn whose model calls noop in steps responses, one call
// each, then answers; the coordinator accepts the answer.
func benchTurn(b *testing.B, steps int) (*llmTurn, *benchModel) {
	m := &benchModel{}
	for range steps {
		m.responses = append(m.responses, benchResponse("noop", benchArgs))
	}
	m.responses = append(m.responses, benchResponse(coord.ToolNewAnswer, `{"content":"done"}`))
	tools, err := tool.NewSet(noopTool)
	if err != nil {
		b.Fatal(err)
	}
	return &llmTurn{
		Model: m, Request: llm.Request{Model: "bench"}, System: "SYSTEM PROMPT", User: "USER MESSAGE",
		Tools: tools, MaxToolSteps: steps + 1,
		OnTool: func(llm.ToolCall, tool.Result, time.Duration) {}, // as the orchestrator listens
		Judge:  func(int, coord.Action) coord.Verdict { return coord.Verdict{Outcome: coord.Accepted} },
	}, m
}

// cost is what n runs of a function took, per run.
type cost struct{ ns, allocs, bytes float64 }

func measure(n int, f func()) cost {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range n {
		f()
	}
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return cost{float64(d.Nanoseconds()) / float64(n), float64(after.Mallocs-before.Mallocs) / float64(n),
		float64(after.TotalAlloc-before.TotalAlloc) / float64(n)}
}

// BenchmarkToolLoop measures the inner tool loop's own cost per tool call:
// dispatching the call (sorting, a goroutine, Invoke's argument check,
// timing, OnTool), appending the result message and the bookkeeping of the
// extra model request it causes, without the tool's time or the model's.
// Four costs are measured in the same run, one after the other:
//
//	turn:     a turn of toolCalls tool steps (one noop call each), then an answer
//	baseline: a turn that answers at once (the same tools offered)
//	model:    one tool-call response streamed from the in-memory model, drained
//	tool:     one direct call of the noop tool
//
// The op is one tool call: ns/op, B/op and allocs/op are
// (turn − baseline)/toolCalls − model − tool. x_baseline is turn divided by
// its baseline, the answer-only turn plus the same number of model
// responses and tool calls made without the loop:
// baseline + toolCalls·(model + tool); 1 would be a loop that costs nothing.
//
//	go test -run '^$' -bench ToolLoop -benchtime 2000x ./internal/agent/
func BenchmarkToolLoop(b *testing.B) {
	const toolCalls = 16
	ctx := context.Background()
	withTools, mt := benchTurn(b, toolCalls)
	baseline, mb := benchTurn(b, 0)
	for _, c := range []struct {
		t     *llmTurn
		m     *benchModel
		steps int
	}{{withTools, mt, toolCalls}, {baseline, mb, 0}} {
		c.m.Reset()
		if res := c.t.Run(ctx); res.Err != nil || res.Steps != c.steps || res.Verdict.Outcome != coord.Accepted {
			b.Fatalf("bench turn: %d steps, verdict %v, err %v; want %d steps, accepted", res.Steps, res.Verdict.Outcome, res.Err, c.steps)
		}
	}
	one := &benchModel{responses: [][]llm.Chunk{benchResponse("noop", benchArgs)}}
	var req llm.Request
	args := json.RawMessage(benchArgs)

	b.ReportAllocs() // the figures below replace the framework's
	b.ResetTimer()
	turn := measure(b.N, func() { mt.Reset(); withTools.Run(ctx) })
	base := measure(b.N, func() { mb.Reset(); baseline.Run(ctx) })
	model := measure(b.N*toolCalls, func() {
		for range one.Stream(ctx, &req) {
		}
	})
	call := measure(b.N*toolCalls, func() { noopTool.Call(ctx, args) })
	b.StopTimer()

	per := func(f func(cost) float64) float64 {
		return (f(turn)-f(base))/toolCalls - f(model) - f(call)
	}
	b.ReportMetric(per(func(c cost) float64 { return c.ns }), "ns/op")
	b.ReportMetric(per(func(c cost) float64 { return c.allocs }), "allocs/op")
	b.ReportMetric(per(func(c cost) float64 { return c.bytes }), "B/op")
	b.ReportMetric(turn.ns/(base.ns+toolCalls*(model.ns+call.ns)), "x_baseline")
	b.ReportMetric(turn.ns, "turn_ns")
	b.ReportMetric(base.ns, "baseline_turn_ns")
	b.ReportMetric(model.ns, "model_ns/response")
}
