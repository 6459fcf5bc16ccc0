package tool

import (
	"context"
	"fmt"
)

// Progress is what a running tool says about itself while it runs: MCP
// progress notifications (Progress of Total, 0 when unknown) and log
// messages (Message only). It is for people, not for the model: a Result
// cannot stream, so progress goes here instead.
type Progress struct {
	Tool     string // the tool's name as the agent knows it (mcp__server__tool)
	Progress float64
	Total    float64 // 0: unknown
	Message  string
}

// ProgressFunc hears a running tool's progress.
type ProgressFunc func(Progress)

type progressKey struct{}

// WithProgress returns a context whose tool calls report progress to f,
// and to whatever listened on ctx before: a run's listener keeps hearing
// when a turn adds its own.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	if outer, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && outer != nil {
		inner := f
		f = func(p Progress) { inner(p); outer(p) }
	}
	return context.WithValue(ctx, progressKey{}, f)
}

// ReportProgress tells the context's ProgressFunc, if any, about progress.
func ReportProgress(ctx context.Context, p Progress) {
	if f, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && f != nil {
		f(p)
	}
}

// String is the progress on one line: "tool: 2/3: message", "tool: 40%",
// "tool: message".
func (p Progress) String() string {
	s := p.Tool
	switch {
	case p.Total > 0:
		s += fmt.Sprintf(": %g/%g", p.Progress, p.Total)
	case p.Progress > 0:
		s += fmt.Sprintf(": %g", p.Progress)
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}
