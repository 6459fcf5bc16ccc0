package tool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

type fakeSource struct {
	tools []Tool
	err   error
	calls atomic.Int32
}

func (f *fakeSource) Tools(context.Context) ([]Tool, error) {
	f.calls.Add(1)
	return f.tools, f.err
}

func TestSourcesAreResolvedOnlyWhenAsked(t *testing.T) {
	src := &fakeSource{tools: []Tool{echo("mcp__s__a"), echo("mcp__s__b")}}
	base, _ := NewSet(echo("custom_tool__x"))
	lazy := base.WithSources(src)
	if src.calls.Load() != 0 {
		t.Fatal("building a set with a source resolved it")
	}
	more, err := lazy.With(echo("vote")) // a turn adds its workflow tools
	if err != nil {
		t.Fatal(err)
	}
	if !more.Pending() || !lazy.Pending() || base.Pending() {
		t.Error("With dropped the sources, or WithSources changed its receiver")
	}
	got, err := more.Resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"vote", "custom_tool__x", "mcp__s__a", "mcp__s__b"}; !slices.Equal(got.Names(), want) {
		t.Errorf("resolved = %v, want %v", got.Names(), want)
	}
	if got.Pending() {
		t.Error("a resolved set still has sources")
	}
	if same, _ := base.Resolve(t.Context()); same != base {
		t.Error("resolving a set without sources made a new one")
	}
}

func TestResolveFailsOnASourceErrorOrACollision(t *testing.T) {
	broken := (&Set{}).WithSources(&fakeSource{err: errors.New("server gone")})
	if _, err := broken.Resolve(t.Context()); err == nil || err.Error() != "server gone" {
		t.Errorf("Resolve = %v, want the source's error", err)
	}
	base, _ := NewSet(echo("a"))
	clash := base.WithSources(&fakeSource{tools: []Tool{echo("a")}})
	if _, err := clash.Resolve(t.Context()); err == nil || !strings.Contains(err.Error(), `two tools are named "a"`) {
		t.Errorf("Resolve = %v, want the collision named", err)
	}
}

func TestReportProgressReachesTheContextsHook(t *testing.T) {
	ReportProgress(t.Context(), Progress{Message: "nobody listens"}) // no hook: nothing happens
	var run, turn []string
	ctx := WithProgress(t.Context(), func(p Progress) { run = append(run, p.String()) })
	ctx = WithProgress(ctx, func(p Progress) { turn = append(turn, p.String()) })
	ReportProgress(ctx, Progress{Tool: "t", Progress: 1, Total: 2, Message: "step"})
	ReportProgress(ctx, Progress{Tool: "t", Message: "log info: hi"})
	want := []string{"t: 1/2: step", "t: log info: hi"}
	if !slices.Equal(turn, want) || !slices.Equal(run, want) {
		t.Errorf("progress heard by the turn %q and the run %q, want %q by both", turn, run, want)
	}
}
