package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/llm"
)

// Tool is something a model may call.
type Tool interface {
	// Def is the definition sent to the model: name, description and the
	// JSON Schema of the arguments.
	Def() llm.ToolDef
	// Call runs the tool with the arguments the model sent (a JSON object).
	// It must return promptly once ctx is done. Failures are results with
	// IsError set, written for the model to read.
	Call(ctx context.Context, args json.RawMessage) Result
}

// Result is what a call returns to the model.
type Result struct {
	Content string
	// IsError marks a failed call. Providers that have a native flag
	// (Anthropic's is_error) get it; the content says what went wrong.
	IsError bool
	// Images are pictures the call returned; Content describes them too.
	// The agent passes them on to the provider, which sends them where its
	// API accepts images in a tool result and drops them where it does not.
	Images []llm.Image
}

// Errorf is an error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Func makes a Tool of a definition and a function; a non-nil error becomes
// an error result with the error's text.
func Func(def llm.ToolDef, fn func(ctx context.Context, args json.RawMessage) (string, error)) Tool {
	return funcTool{def, fn}
}

type funcTool struct {
	def llm.ToolDef
	fn  func(context.Context, json.RawMessage) (string, error)
}

func (f funcTool) Def() llm.ToolDef { return f.def }

func (f funcTool) Call(ctx context.Context, args json.RawMessage) Result {
	s, err := f.fn(ctx, args)
	if err != nil {
		return Result{Content: err.Error(), IsError: true}
	}
	return Result{Content: s}
}

// Invoke calls t with the raw argument text a model produced, so that no
// tool can take the turn down with it: empty arguments are {}, arguments
// that are not a JSON object are refused before the tool runs, a panic
// becomes an error result naming the panic value, and with timeout > 0 the
// call's context ends after it and a call that overran reports that. A
// result longer than MaxResult is cut, with a note (Cut).
func Invoke(ctx context.Context, t Tool, rawArgs string, timeout time.Duration) (res Result) {
	name := t.Def().Name
	args := json.RawMessage(strings.TrimSpace(rawArgs))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return Errorf("the arguments of %s are not a JSON object (%s); call it again with a JSON object", name, describe(err))
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			res = Errorf("tool %s failed: panic: %v", name, p)
		}
	}()
	res = t.Call(ctx, args)
	if timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && !res.IsError {
		// The tool returned after its deadline without noticing: whatever
		// it produced may be partial, so it must not pass for a success.
		return Errorf("tool %s timed out after %s", name, timeout)
	}
	if timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.Content = fmt.Sprintf("tool %s timed out after %s: %s", name, timeout, res.Content)
	}
	return Cut(res, "")
}

func describe(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}
