package agent

import (
	"context"
	"time"

	"github.com/massgen/massgen/internal/llm"
)

// Emitter receives what a model streams, for displays and logs.
type Emitter interface {
	Text(s string)
	Reasoning(s string)
}

// modelObserver is an Emitter that also hears of each request as it ends
// (the LLM agent's, which reports it as a ModelCall outcome).
type modelObserver interface {
	modelCalled(model string, u llm.Usage, d time.Duration, err error)
}

// response is one model response, collected.
type response struct {
	text  string
	calls []llm.ToolCall
	usage llm.Usage
}

// collect streams one request and gathers the response, forwarding deltas
// to emit as they arrive.
func collect(ctx context.Context, m llm.Model, req *llm.Request, emit Emitter) (r response, err error) {
	if o, ok := emit.(modelObserver); ok {
		start := time.Now()
		defer func() { o.modelCalled(req.Model, r.usage, time.Since(start), err) }()
	}
	var text []byte
	var args argTexts
	toolText, _ := emit.(ToolTextEmitter)
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			r.text = string(text)
			return r, err
		}
		switch c.Kind {
		case llm.ChunkText:
			text = append(text, c.Text...)
			if emit != nil {
				emit.Text(c.Text)
			}
		case llm.ChunkReasoning:
			if emit != nil {
				emit.Reasoning(c.Text)
			}
		case llm.ChunkToolCall:
			r.calls = append(r.calls, *c.ToolCall)
		case llm.ChunkToolArgs:
			if toolText != nil {
				if tool, s := args.feed(c); s != "" {
					toolText.ToolText(tool, s)
				}
			}
		case llm.ChunkUsage:
			r.usage.Add(*c.Usage)
		}
	}
	r.text = string(text)
	return r, ctx.Err()
}
