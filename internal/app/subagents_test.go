package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/orchestrator"
)

// childServer is the children's model: the simulator's default policy
// (answer, vote, present) behind a gate that holds every request whose
// prompt says SLOW-TASK until its client gives up (a cancelled child) or
// the test ends. The model is a priced one (gpt-4o-mini), so children cost
// money the parent must be charged.
func childServer(t *testing.T, sc *llmsim.Scenario) string {
	t.Helper()
	if sc == nil {
		sc = &llmsim.Scenario{Models: map[string]llmsim.ModelScript{}}
	}
	sim := llmsim.New(sc)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("SLOW-TASK")) {
			select {
			case <-r.Context().Done():
			case <-done:
			case <-time.After(2 * time.Minute):
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
		sim.Close()
	})
	return srv.URL + "/v1"
}

// A parent spawns three children in parallel — one in the background,
// two blocking — and cancels the background one while it still works.
// Each child is a whole massgen run with its own logs under the parent's;
// their cost and tokens roll up into the parent's outcome; no goroutine is
// left behind.
func TestSubagentsSpawnThreeCancelOneAndRollUp(t *testing.T) {
	// Registered first, so it runs last: after the servers have closed.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	childURL := childServer(t, nil)
	work := t.TempDir()
	yaml := fmt.Sprintf(`agents:
  - id: lead
    backend:
      type: sim
      model: lead
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          lead:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "CONTEXT.md", "content": "A website about jazz."}'}
              - calls:
                  - {name: spawn_subagents, arguments: '{"tasks": [{"task": "SLOW-TASK: research bebop", "subagent_id": "bg"}], "background": true}'}
              - expect_results:
                  - {name: spawn_subagents, contains: '"mode": "background"'}
                calls:
                  - {name: spawn_subagents, arguments: '{"tasks": [{"task": "Write the biography", "subagent_id": "bio"}, {"task": "List songs", "subagent_id": "songs", "subagent_type": "critic"}]}'}
              - expect_results:
                  - {name: spawn_subagents, contains: '"success": true'}
                calls:
                  - {name: list_subagents, arguments: '{}'}
              - expect_results:
                  - {name: list_subagents, contains: '"seconds_remaining"'}
                calls:
                  - {name: cancel_subagent, arguments: '{"subagent_id": "bg"}'}
              - expect_results:
                  - {name: cancel_subagent, contains: '"status": "cancelled"'}
                answer: "The site plan, with the biography and songs from my subagents."
orchestrator:
  coordination:
    enable_subagents: true
    subagent_orchestrator:
      enabled: true
      agents:
        - backend: {type: chatcompletion, base_url: %q, model: gpt-4o-mini, api_key: test}
ui: {enable_final_presentation: false}
`, childURL)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	logs := filepath.Join(work, "logs")
	out, err := Execute(t.Context(), env, Request{Question: "Build the jazz site.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 300}, Logging: Logging{LogDir: logs, Automation: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != orchestrator.Completed || !strings.Contains(out.Final, "subagents") {
		t.Fatalf("run %s: %v %q\n%s", out.Status, out.Err, out.Final, stderr.String())
	}
	for _, f := range out.IgnoredFeatures {
		if strings.Contains(f, "subagent") {
			t.Errorf("ignored: %s", f)
		}
	}
	// Each child logged a run of its own under the parent's log directory,
	// and the blocking ones answered; the cancelled one did not complete.
	var childIn, childOut int64
	var childCost float64
	for _, id := range []string{"bg", "bio", "songs"} {
		matches, _ := filepath.Glob(filepath.Join(out.LogDir, "subagents", id, "log_*", "status.json"))
		if len(matches) != 1 {
			t.Fatalf("child %s: status.json files %v", id, matches)
		}
		var st struct {
			Meta    struct{ Status string }
			Results struct {
				InputTokens  int64   `json:"input_tokens"`
				OutputTokens int64   `json:"output_tokens"`
				CostUSD      float64 `json:"cost_usd"`
			}
		}
		data, err := os.ReadFile(matches[0])
		if err != nil || json.Unmarshal(data, &st) != nil {
			t.Fatalf("child %s status: %v %s", id, err, data)
		}
		want := "completed"
		if id == "bg" {
			want = "interrupted"
		}
		if st.Meta.Status != want {
			t.Errorf("child %s ended %q, want %q", id, st.Meta.Status, want)
		}
		childIn, childOut, childCost = childIn+st.Results.InputTokens, childOut+st.Results.OutputTokens, childCost+st.Results.CostUSD
	}
	t.Logf("children: %d/%d tokens, $%.6f; lead: %+v $%.6f", childIn, childOut, childCost, out.Usage["lead"], out.Cost["lead"])
	if childCost <= 0 || childIn == 0 {
		t.Fatalf("the children spent nothing? %d tokens $%v", childIn, childCost)
	}
	// The lead is simulated (no price): all its cost is its children's.
	if c := out.Cost["lead"]; math.Abs(c-childCost) > 1e-9 {
		t.Errorf("lead's cost $%v, want its children's $%v", c, childCost)
	}
	own := modelCallTokens(t, filepath.Join(out.LogDir, "coordination_events.jsonl"), "lead")
	if u := out.Usage["lead"]; u.InputTokens != own+childIn || u.OutputTokens < childOut {
		t.Errorf("lead's usage %+v, want its own %d input tokens plus its children's %d/%d", u, own, childIn, childOut)
	}
	// Children wrote only in their own directories, inside the lead's
	// workspace, whose files are where the result said.
	if _, err := os.Stat(filepath.Join(out.Workspace, "subagents", "bio")); err != nil {
		t.Errorf("the children's directories are inside the lead's workspace: %v", err)
	}
}

// What a child spends counts in its parent's budget: a lead whose own
// model is free (simulated) reaches max_cost_usd through its child alone,
// and the run stops coordinating for it.
func TestSubagentSpendStopsTheParentsBudget(t *testing.T) {
	childURL := childServer(t, nil)
	work := t.TempDir()
	yaml := fmt.Sprintf(`agents:
  - id: lead
    backend:
      type: sim
      model: lead
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          lead:
            steps:
              - calls: [{name: write_file, arguments: '{"path": "CONTEXT.md", "content": "A test."}'}]
              - calls: [{name: spawn_subagents, arguments: '{"tasks": [{"task": "Answer."}], "refine": false}'}]
              - expect_results: [{name: spawn_subagents, contains: '"status": "completed"'}]
                answer: "first"
orchestrator:
  max_cost_usd: 0.0000001
  coordination:
    enable_subagents: true
    subagent_orchestrator: {enabled: true, agents: [{backend: {type: chatcompletion, base_url: %q, model: gpt-4o-mini, api_key: test}}]}
`, childURL)
	var budget []string
	observe := func(sub *event.Subscription, _ RunInfo) {
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if b, ok := e.(event.BudgetExceeded); ok {
				budget = append(budget, b.Reason)
			}
		}
	}
	env := &Env{Getenv: func(string) string { return "" }, Stderr: io.Discard, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}, Observer: Observer{Observe: observe}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Cost["lead"] <= 0.0000001 {
		t.Fatalf("the lead was charged $%v", out.Cost["lead"])
	}
	if len(budget) != 1 || !strings.Contains(budget[0], "max_cost_usd") {
		t.Fatalf("budget events %q (run %s)", budget, out.Status)
	}
}

// A child inheriting its parent's backend gets the parent's context paths
// read-only, a workspace of its own and its type's prompt; the parent's
// config is left as it was.
func TestChildTeamIsReadOnly(t *testing.T) {
	parent := config.Agent{ID: "lead", SystemMessage: "lead's", Backend: config.Backend{Type: "sim", Cwd: "ws",
		ContextPaths: []config.ContextPath{{Path: "src", Permission: "write"}, {Path: "docs"}}}}
	got := childTeam(nil, parent, "Be a critic.")
	if len(got) != 1 || got[0].ID != "agent" || got[0].Backend.Cwd != "workspace" || got[0].SystemMessage != "Be a critic.\n\nlead's" {
		t.Fatalf("child team %+v", got)
	}
	for _, cp := range got[0].Backend.ContextPaths {
		if cp.Permission != "read" {
			t.Errorf("%s is %s to the child", cp.Path, cp.Permission)
		}
	}
	if parent.Backend.ContextPaths[0].Permission != "write" {
		t.Error("the parent's own config changed")
	}
	team := []config.Agent{{ID: "c1", Backend: config.Backend{Type: "sim", ContextPaths: []config.ContextPath{{Path: "x", Permission: "write"}}}}}
	if got := childTeam(team, parent, ""); got[0].ID != "c1" || got[0].Backend.ContextPaths[0].Permission != "read" || team[0].Backend.ContextPaths[0].Permission != "write" {
		t.Errorf("configured team: %+v (config %+v)", got, team)
	}
}

// modelCallTokens sums the input tokens of agent's own model calls in an
// events log.
func modelCallTokens(t *testing.T, path, agent string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Type        string `json:"type"`
			Agent       string `json:"agent"`
			InputTokens int64  `json:"input_tokens"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "model_called" && e.Agent == agent {
			n += e.InputTokens
		}
	}
	return n
}

// BenchmarkSubagentOverhead measures what one subagent costs against a
// direct model call, in one run: the lead's spawn_subagents call (a whole
// child run: its team built, its simulator, its workspace, one answer)
// next to the lead's own model calls, on the in-process simulator with no
// simulated latency, so both are pure overhead.
//
//	go test -run '^$' -bench SubagentOverhead -benchtime 20x ./internal/app/
func BenchmarkSubagentOverhead(b *testing.B) {
	const yaml = `agents:
  - id: lead
    backend:
      type: sim
      model: lead
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          lead:
            steps:
              - calls: [{name: write_file, arguments: '{"path": "CONTEXT.md", "content": "A benchmark."}'}]
              - calls: [{name: spawn_subagents, arguments: '{"tasks": [{"task": "Answer."}], "refine": false}'}]
              - expect_results: [{name: spawn_subagents, contains: '"status": "completed"'}]
                answer: "done"
          child: {}
orchestrator:
  coordination:
    enable_subagents: true
    subagent_orchestrator: {enabled: true, agents: [{backend: {type: sim, model: child}}]}
ui: {enable_final_presentation: false}
`
	dir := b.TempDir()
	var spawn, calls time.Duration
	var nCalls int
	for range b.N {
		var mu sync.Mutex
		observe := func(sub *event.Subscription, _ RunInfo) {
			for {
				e, ok := sub.Next(nil)
				if !ok {
					return
				}
				mu.Lock()
				switch e := e.(type) {
				case event.ToolCalled:
					if e.Tool == "spawn_subagents" {
						spawn += e.Duration
					}
				case event.ModelCalled:
					if e.Agent == "lead" {
						calls += e.Duration
						nCalls++
					}
				}
				mu.Unlock()
			}
		}
		env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
		out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Quick: true}, Logging: Logging{NoLogs: true}, Observer: Observer{Observe: observe}})
		if err != nil || out.Status != orchestrator.Completed {
			b.Fatalf("run failed: %v %+v", err, out)
		}
	}
	perCall := float64(calls.Microseconds()) / float64(nCalls) / 1000
	perSpawn := float64(spawn.Microseconds()) / float64(b.N) / 1000
	b.ReportMetric(perCall, "model_call_ms")
	b.ReportMetric(perSpawn, "subagent_ms")
	b.ReportMetric(perSpawn/perCall, "subagent/model_call")
}
