package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

func TestAgentToolsRunInTheTurnAndArePublished(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - calls:
          - {name: add, arguments: '{"a":2,"b":3}'}
          - {name: lookup, arguments: '{"country":"Mars"}'}
      - expect_results: [{name: add, contains: "5"}, {name: lookup, contains: "no capital known"}]
        answer: "2 + 3 = 5"
`, "a", "b")
	agents[0].Tools = tooltest.Set()
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	for _, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("simulator refused request %d: %s", r.ID, r.Problem)
		}
	}
	calls := rec.of(event.TypeToolCalled)
	if len(calls) != 2 {
		t.Fatalf("%d tool_called events, want 2: %+v", len(calls), calls)
	}
	if c := calls[0]; c.Agent != "a" || c.Text != "add" || c.IsError || c.Result != "5" || c.Args == "" || c.Attempt != 1 {
		t.Errorf("first tool event = %+v, want agent a's successful add", c)
	}
	if c := calls[1]; c.Agent != "a" || c.Text != "lookup" || !c.IsError || c.Result != `no capital known for "Mars"` || c.Args != `{"country":"Mars"}` {
		t.Errorf("second tool event = %+v, want agent a's failed lookup with its error", c)
	}
	found := false
	for _, a := range rec.of(event.TypeAnswerAccepted) {
		found = found || a.Agent == "a" && a.Text == "2 + 3 = 5"
	}
	if !found {
		t.Errorf("agent a's answer after its tools was not accepted: %+v", rec.of(event.TypeAnswerAccepted))
	}
}

// The winner's PresentTools run in its final presentation, inside the
// OnPresent(true) … OnPresent(false) window, and are published like turn tools.
func TestPresentToolsRunInsideOnPresent(t *testing.T) {
	_, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - when: coordination
        answer: "A"
      - when: coordination
        vote: agent1
      - calls: [{name: add, arguments: '{"a":2,"b":3}'}]
      - expect_results: [{name: add, contains: "5"}]
        text: "Presented with 5."
`, "a")
	var mu sync.Mutex
	var order []string
	present := tool.Func(llm.ToolDef{Name: "add", Parameters: map[string]any{"type": "object"}},
		func(ctx context.Context, raw json.RawMessage) (string, error) {
			mu.Lock()
			order = append(order, "add")
			mu.Unlock()
			return tooltest.Add().Call(ctx, raw).Content, nil
		})
	set, err := tool.NewSet(present)
	if err != nil {
		t.Fatal(err)
	}
	agents[0].PresentTools = set
	agents[0].OnPresent = func(on bool) {
		mu.Lock()
		order = append(order, fmt.Sprint("present=", on))
		mu.Unlock()
	}
	res, rec := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentAlways}})
	if res.Status != Completed || res.Final != "Presented with 5." {
		t.Fatalf("status %s, final %q (%v)", res.Status, res.Final, res.Err)
	}
	if got := strings.Join(order, " "); got != "present=true add present=false" {
		t.Errorf("order %q", got)
	}
	if calls := rec.of(event.TypeToolCalled); len(calls) != 1 || calls[0].Text != "add" || calls[0].Result != "5" {
		t.Errorf("tool events %+v", calls)
	}
	if res.Tools["a"].Calls != 1 {
		t.Errorf("tool use %+v", res.Tools["a"])
	}
}
