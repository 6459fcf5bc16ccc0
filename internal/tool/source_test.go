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
	ReportProgress(t.Context(), "nobody listens") // no hook: nothing happens
	var got []string
	ctx := WithProgress(t.Context(), func(m string) { got = append(got, m) })
	ReportProgress(ctx, "step 1/2")
	if !slices.Equal(got, []string{"step 1/2"}) {
		t.Errorf("progress = %v", got)
	}
}
