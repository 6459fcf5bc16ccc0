package tool

import "context"

// ProgressFunc hears a running tool's progress: a line for people (MCP
// progress and log notifications), not for the model. A Result cannot
// stream, so progress goes here instead.
type ProgressFunc func(message string)

type progressKey struct{}

// WithProgress returns a context whose tool calls report progress to f.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ReportProgress tells the context's ProgressFunc, if any, about progress.
func ReportProgress(ctx context.Context, message string) {
	if f, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && f != nil {
		f(message)
	}
}
