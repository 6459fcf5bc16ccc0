package orchestrator

import (
	"testing"

	"github.com/massgen/massgen/internal/event"
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
