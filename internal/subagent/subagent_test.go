package subagent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRunner answers each child at once, except those whose task says
// "hang": they wait for their context (cancel_subagent, the run's end).
type fakeRunner struct {
	mu      sync.Mutex
	specs   []Spec
	started chan string // told each child's id as it starts, when set
}

func (f *fakeRunner) Run(ctx context.Context, s Spec) Report {
	f.mu.Lock()
	f.specs = append(f.specs, s)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- s.ID
	}
	u := llm.Usage{InputTokens: 100, OutputTokens: 10}
	if strings.Contains(s.Task, "hang") {
		<-ctx.Done()
		return Report{Usage: u, CostUSD: 0.5, Err: ctx.Err()}
	}
	return Report{Answer: "done: " + s.ID, Usage: u, CostUSD: 1}
}

func newParent(t *testing.T) Parent {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "CONTEXT.md"), []byte("Building a site about jazz."), 0o644); err != nil {
		t.Fatal(err)
	}
	return Parent{Agent: "a", Workspace: ws, CanRead: func(p string) (string, error) {
		if !strings.HasPrefix(p, ws) {
			return "", os.ErrPermission
		}
		return p, nil
	}}
}

func call(t *testing.T, m *Manager, ctx context.Context, name, args string) map[string]any {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Def().Name == name {
			r := tool.Invoke(ctx, tl, args, 0)
			var out map[string]any
			if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
				t.Fatalf("%s: %v: %s", name, err, r.Content)
			}
			return out
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// Three children in parallel: two blocking, one in the background that
// is cancelled; every child's spend reaches the charge function, once.
func TestSpawnBlockingBackgroundCancelAndCharges(t *testing.T) {
	var mu sync.Mutex
	var charged llm.Usage
	var cost float64
	ctx := tool.WithCharge(t.Context(), func(u llm.Usage, c float64) bool {
		mu.Lock()
		defer mu.Unlock()
		charged.Add(u)
		cost += c
		return true
	})
	fr := &fakeRunner{started: make(chan string, 10)}
	m := New(t.Context(), Settings{}, newParent(t), fr)
	bg := call(t, m, ctx, "spawn_subagents", `{"tasks":[{"task":"hang around","subagent_id":"bg"}],"background":true}`)
	if bg["mode"] != "background" || bg["success"] != true {
		t.Fatalf("background spawn: %v", bg)
	}
	if id := <-fr.started; id != "bg" { // at work, spending
		t.Fatalf("started %s", id)
	}
	out := call(t, m, ctx, "spawn_subagents", `{"tasks":[{"task":"bio"},{"task":"songs","subagent_id":"songs"}]}`)
	if out["success"] != true || out["mode"] != "blocking" {
		t.Fatalf("blocking spawn: %v", out)
	}
	res := out["results"].([]any)
	if len(res) != 2 || res[0].(map[string]any)["answer"] != "done: subagent_1" || res[1].(map[string]any)["status"] != "completed" {
		t.Fatalf("results: %v", res)
	}
	list := call(t, m, ctx, "list_subagents", `{}`)
	if list["count"] != float64(3) {
		t.Fatalf("list: %v", list)
	}
	for _, s := range list["subagents"].([]any) {
		s := s.(map[string]any)
		if s["subagent_id"] == "bg" && (s["status"] != "running" || s["seconds_remaining"] == nil) {
			t.Fatalf("bg should be running with time left: %v", s)
		}
	}
	if r := call(t, m, ctx, "send_message_to_subagent", `{"subagent_id":"bg","message":"focus on bebop"}`); r["success"] != true {
		t.Fatalf("send: %v", r)
	}
	if r := call(t, m, ctx, "cancel_subagent", `{"subagent_id":"bg"}`); r["success"] != true {
		t.Fatalf("cancel: %v", r)
	}
	if r := call(t, m, ctx, "cancel_subagent", `{"subagent_id":"bg"}`); r["success"] != false {
		t.Fatalf("a second cancel should fail: %v", r)
	}
	list = call(t, m, ctx, "list_subagents", `{}`)
	for _, s := range list["subagents"].([]any) {
		if s := s.(map[string]any); s["subagent_id"] == "bg" && s["status"] != "cancelled" {
			t.Fatalf("bg: %v", s)
		}
	}
	left, leftCost := m.Close()
	if left.Total() != 0 || leftCost != 0 {
		t.Fatalf("nothing should be left uncharged: %v %v", left, leftCost)
	}
	mu.Lock()
	if charged.InputTokens != 300 || charged.OutputTokens != 30 || cost != 2.5 {
		t.Fatalf("charged %v $%v, want 300/30 tokens and $2.5", charged, cost)
	}
	mu.Unlock()
	// A continued child runs again with its earlier exchange.
	m2 := New(t.Context(), Settings{}, newParent(t), fr)
	defer m2.Close()
	call(t, m2, ctx, "spawn_subagents", `{"tasks":[{"task":"first","subagent_id":"x"}]}`)
	r := call(t, m2, ctx, "continue_subagent", `{"subagent_id":"x","message":"add more"}`)
	if r["status"] != "completed" {
		t.Fatalf("continue: %v", r)
	}
	fr.mu.Lock()
	last := fr.specs[len(fr.specs)-1].Task
	fr.mu.Unlock()
	if !strings.Contains(last, "done: x") || !strings.Contains(last, "add more") {
		t.Fatalf("the continued run should see its earlier answer and the message: %q", last)
	}
}

// A background child still running when the run ends is cancelled by
// Close; what it spent, which the run can no longer take, is returned.
func TestCloseCancelsBackgroundAndReturnsLeftover(t *testing.T) {
	ctx := tool.WithCharge(t.Context(), func(llm.Usage, float64) bool { return false }) // the run is over
	fr := &fakeRunner{started: make(chan string, 1)}
	m := New(t.Context(), Settings{}, newParent(t), fr)
	call(t, m, ctx, "spawn_subagents", `{"tasks":[{"task":"hang"}],"background":true}`)
	<-fr.started // at work, spending
	u, c := m.Close()
	if u.InputTokens != 100 || c != 0.5 {
		t.Fatalf("leftover %v $%v", u, c)
	}
}

// What spawn_subagents refuses, before anything starts: no CONTEXT.md,
// too many tasks, ids that are paths or taken, unknown types, paths the
// parent may not read itself.
func TestSpawnRefusals(t *testing.T) {
	p := newParent(t)
	fr := &fakeRunner{}
	m := New(t.Context(), Settings{MaxConcurrent: 2}, p, fr)
	defer m.Close()
	for _, tc := range []struct{ args, want string }{
		{`{"tasks":[{"task":"a"},{"task":"b"},{"task":"c"}]}`, "Too many tasks: 3 requested but maximum is 2"},
		{`{"tasks":[{"task":"a","subagent_id":"../../etc"}]}`, "not a valid name"},
		{`{"tasks":[{"task":"a","subagent_id":"x"},{"task":"b","subagent_id":"x"}]}`, "already used"},
		{`{"tasks":[{"task":"a","subagent_type":"nosuch"}]}`, "unknown subagent_type"},
		{`{"tasks":[{"task":"a","context_paths":["/etc"]}]}`, "cannot be shared"},
		{`{"tasks":[{}]}`, "missing required 'task'"},
		{`{"tasks":[]}`, "No tasks provided"},
	} {
		r := call(t, m, t.Context(), "spawn_subagents", tc.args)
		if r["success"] != false || !strings.Contains(r["error"].(string), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.args, r, tc.want)
		}
	}
	os.Remove(filepath.Join(p.Workspace, "CONTEXT.md"))
	if r := call(t, m, t.Context(), "spawn_subagents", `{"tasks":[{"task":"a"}]}`); !strings.Contains(r["error"].(string), "CONTEXT.md not found") {
		t.Errorf("without CONTEXT.md: %v", r)
	}
	if len(fr.specs) != 0 {
		t.Fatalf("no child should have run: %v", fr.specs)
	}
	if _, err := os.Stat(filepath.Join(p.Workspace, "subagents")); err == nil {
		t.Fatal("a refused spawn made directories")
	}
}

func TestTypes(t *testing.T) {
	types, missing, err := LoadTypes("", nil)
	if err != nil || len(missing) != 0 || len(types) != len(DefaultTypes) {
		t.Fatalf("defaults: %v %v %v", types, missing, err)
	}
	proj := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(proj, "critic"), 0o755))
	must(os.WriteFile(filepath.Join(proj, "critic", "SUBAGENT.md"), []byte("---\nname: critic\ndescription: ours\n---\nBe harsh.\n"), 0o644))
	must(os.MkdirAll(filepath.Join(proj, "nodesc"), 0o755))
	must(os.WriteFile(filepath.Join(proj, "nodesc", "SUBAGENT.md"), []byte("---\nname: nodesc\n---\nx\n"), 0o644))
	types, missing, err = LoadTypes(proj, []string{"critic", "round_evaluator", "nodesc"})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := Find(types, "CRITIC")
	if !ok || c.Description != "ours" || c.Prompt != "Be harsh." {
		t.Fatalf("the project's critic should win: %+v", c)
	}
	if re, ok := Find(types, "round_evaluator"); !ok || !strings.Contains(re.Prompt, "critique_packet.md") {
		t.Fatalf("built-in round_evaluator: %+v", re)
	}
	if len(missing) != 1 || missing[0] != "nodesc" {
		t.Fatalf("a type without a description is skipped: missing %v", missing)
	}
	must(os.WriteFile(filepath.Join(proj, "critic", "SUBAGENT.md"), []byte("---\nname: critic\ndescription: x\nmodel: y\n---\n"), 0o644))
	if _, _, err := LoadTypes(proj, nil); err == nil || !strings.Contains(err.Error(), "model") {
		t.Fatalf("an unknown field is an error naming it: %v", err)
	}
}

// A child's time: its run is told its timeout; one that answers as its
// deadline comes is completed_but_timeout, one still at work past the
// grace is stopped and reported as timeout, with what it spent charged.
// In a synctest bubble the minutes pass at once.
func TestTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var spent float64
		ctx := tool.WithCharge(t.Context(), func(_ llm.Usage, c float64) bool { mu.Lock(); spent += c; mu.Unlock(); return true })
		var told time.Duration
		r := RunnerFunc(func(ctx context.Context, s Spec) Report {
			mu.Lock()
			told = s.Timeout
			mu.Unlock()
			if strings.Contains(s.Task, "late") {
				return Report{Answer: "best so far", TimedOut: true, CostUSD: 1}
			}
			<-ctx.Done() // never answers
			return Report{CostUSD: 2, Err: ctx.Err()}
		})
		m := New(t.Context(), Settings{DefaultTimeout: 5 * time.Second, MinTimeout: 90 * time.Second, MaxTimeout: 120 * time.Second}, newParent(t), r)
		defer m.Close()
		start := time.Now()
		out := call(t, m, ctx, "spawn_subagents", `{"tasks":[{"task":"late","subagent_id":"late"},{"task":"stuck","subagent_id":"stuck"}]}`)
		res := out["results"].([]any)
		if s := res[0].(map[string]any)["status"]; s != StatusCompletedButTimeout {
			t.Errorf("late: %v", s)
		}
		if s := res[1].(map[string]any)["status"]; s != StatusTimeout {
			t.Errorf("stuck: %v", s)
		}
		mu.Lock()
		defer mu.Unlock()
		if told != 90*time.Second {
			t.Errorf("the child was told %s, want the clamped 90s", told)
		}
		if took := time.Since(start); took != 90*time.Second+30*time.Second {
			t.Errorf("stopped after %s, want its 90s and 30s of grace", took)
		}
		if spent != 3 {
			t.Errorf("charged $%v, want $3", spent)
		}
	})
}
