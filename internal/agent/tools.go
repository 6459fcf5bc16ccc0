package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// maxParallelCalls bounds how many calls of one response run at once: a
// model that asks for fifty searches gets them, a few at a time.
const maxParallelCalls = 4

// sorted is one response's calls by what happens to them. results holds
// one result per call, in call order, filled in as they are decided.
type sorted struct {
	run      []int // calls of the agent's own tools, to run
	workflow []int // workflow calls, to judge
	results  []tool.Result
}

// sortCalls sorts calls against the tools offered. A call to a tool that
// does not exist gets its error result at once, naming the tools there are.
func sortCalls(calls []llm.ToolCall, tools *tool.Set) sorted {
	s := sorted{results: make([]tool.Result, len(calls))}
	for i, c := range calls {
		_, known := tools.Lookup(c.Name)
		switch {
		case c.Name == coord.ToolNewAnswer || c.Name == coord.ToolVote || c.Name == coord.ToolStop && known:
			// Judged even when not offered (a vote before any answer
			// exists), so that the model hears the coordinator's reason;
			// stop where it is offered (decomposition mode).
			s.workflow = append(s.workflow, i)
		case known:
			s.run = append(s.run, i)
		default:
			s.results[i] = tool.Errorf("tool %q is not available here. Available tools: %s.", c.Name, strings.Join(tools.Names(), ", "))
		}
	}
	return s
}

// isWorkflow reports whether call i is a workflow call.
func (s sorted) isWorkflow(i int) bool { return slices.Contains(s.workflow, i) }

// runTools runs the calls in s.run, several at a time, and records their
// results in s.results. OnTool hears of each, in call order, once all are done.
func (t *llmTurn) runTools(ctx context.Context, calls []llm.ToolCall, s sorted, tools *tool.Set) {
	took := make([]time.Duration, len(calls))
	sem := make(chan struct{}, maxParallelCalls)
	var wg sync.WaitGroup
	for _, i := range s.run {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			tl, _ := tools.Lookup(calls[i].Name)
			start := time.Now()
			s.results[i] = tool.Invoke(ctx, tl, calls[i].Arguments, t.ToolTimeout)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	if t.OnTool == nil {
		return
	}
	for _, i := range s.run {
		t.OnTool(calls[i], s.results[i], took[i])
	}
}
