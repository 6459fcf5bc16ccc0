package mcp

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// mute is a real stdio server that reads its stdin and never answers
// initialize (issue 18: such a server held every agent for 121 s).
func mute(name string) Server {
	return Server{Name: name, Command: "sh", Args: []string{"-c", "cat >/dev/null"}}
}

// leftOutRecorder collects what Options.LeftOut hears.
type leftOutRecorder struct {
	mu  sync.Mutex
	got []LeftOutServer
}

func (r *leftOutRecorder) hear(l LeftOutServer) { r.mu.Lock(); r.got = append(r.got, l); r.mu.Unlock() }

func (r *leftOutRecorder) servers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.got {
		out = append(out, l.Agent+"/"+l.Server)
	}
	return out
}

// The default start-up limit is short (upstream's connect timeout), not
// the two minutes it was.
func TestDefaultStartTimeoutIsUpstreamsConnectTimeout(t *testing.T) {
	if got := (Options{}).withDefaults().StartTimeout; got != 30*time.Second {
		t.Errorf("default start timeout = %v, want 30s", got)
	}
}

// A server that never answers initialize is given up after its
// init_timeout; the agent gets its other servers' tools, and the pool
// says which server it goes without, to the callback (before the agent's
// turn goes on) and to LeftOut (for a run's report).
func TestAServerThatNeverAnswersIsLeftOutAfterItsInitTimeout(t *testing.T) {
	silent := mute("silent")
	silent.InitTimeout = 300 * time.Millisecond
	var warnings []string
	var mu sync.Mutex
	rec := &leftOutRecorder{}
	p, hs := started(t, Options{LeftOut: rec.hear, Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }}, silent)
	if set := toolsOf(t, p.Tools("a", hs, nil, nil)); len(set.Names()) != 0 {
		t.Errorf("tools = %v, want none", set.Names())
	}
	if got := rec.servers(); !slices.Equal(got, []string{"a/silent"}) {
		t.Errorf("LeftOut heard %v, want a/silent", got)
	}
	left := p.LeftOut()
	if len(left) != 1 || left[0].Agent != "a" || left[0].Server != "silent" ||
		!strings.Contains(left[0].Err.Error(), "MCP server silent did not answer within its start-up limit (init_timeout 300ms, or the run's deadline if sooner), so it was stopped: command \"sh -c cat >/dev/null\"") {
		t.Errorf("LeftOut() = %+v", left)
	}
	mu.Lock()
	defer mu.Unlock()
	if j := strings.Join(warnings, "\n"); !strings.Contains(j, "agent a: its tools are left out: MCP server silent did not answer within its start-up limit") {
		t.Errorf("warnings = %s", j)
	}
}

// A pool that serves one run starts nothing past the run's deadline,
// whatever a server's own limit.
func TestTheRunsDeadlineBoundsTheStart(t *testing.T) {
	silent := mute("silent")
	silent.InitTimeout = time.Hour
	p := NewPool(Options{LogDir: t.TempDir()})
	t.Cleanup(p.Close)
	h, err := p.Add(silent)
	if err != nil {
		t.Fatal(err)
	}
	p.StartBy("", time.Now().Add(300*time.Millisecond))
	tools, err := p.Tools("a", []Handle{h}, nil, nil).Tools(ctxT(t)) // ctxT: 2 minutes, far beyond
	if err != nil || len(tools) != 0 {
		t.Fatalf("tools = %v, %v; want none, no error", tools, err)
	}
	if left := p.LeftOut(); len(left) != 1 || !strings.Contains(left[0].Err.Error(), "did not answer within its start-up limit") {
		t.Errorf("LeftOut() = %+v", left)
	}
}

// The agent goes on with its other servers' tools.
func TestAnAgentKeepsItsOtherServersWhenOneNeverAnswers(t *testing.T) {
	silent := mute("silent")
	silent.InitTimeout = 300 * time.Millisecond
	p, hs := started(t, Options{}, silent, everything(t))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	if _, ok := set.Lookup("mcp__everything__echo"); !ok {
		t.Errorf("tools = %v, want the working server's", set.Names())
	}
	if left := p.LeftOut(); len(left) != 1 || left[0].Server != "silent" {
		t.Errorf("LeftOut() = %+v, want silent only", left)
	}
}
