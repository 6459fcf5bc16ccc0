package orchestrator

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// The task decomposer on the simulator: the config's subtask (a's) is
// kept, the first agent's call before the run writes b's, and c, which
// the reply leaves out, gets upstream's fallback — the run says so. Each
// agent's turn carries its own subtask and sees the others'; the
// presenter (b, presenter_agent) is shown every agent's subtask, stop
// summary and work.
func TestSubtasksFromConfigDecomposerAndFallback(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - text: 'Here: {"subtasks": {"a": "IGNORED", "b": {"subtask": "SUB-B: the evaluator", "criteria": []}, "zed": "nobody"}}'
`, "a", "b", "c")
	res, rec := run(t, agents, Options{Settings: coord.Settings{Decomposition: true, Presenter: "b"},
		Subtasks: &Subtasks{Given: map[string]string{"a": "SUB-A: the parser"}, Decompose: true}})
	if res.Status != Completed || res.Winner != "b" {
		t.Fatalf("status = %s, winner %s (%v)", res.Status, res.Winner, res.Err)
	}
	settled(t, srv)
	prompt := requestsOf(srv, "sim-a")[0].Messages
	if p := prompt[len(prompt)-1].Content; !strings.Contains(p, "Create a decomposition plan for 3 agents") ||
		!strings.Contains(p, "[already assigned: SUB-A: the parser]") || strings.Contains(p, `"a": {"subtask"`) {
		t.Errorf("the decomposer's prompt: %.600s", p)
	}
	mine := map[string]string{"a": "SUB-A: the parser", "b": "SUB-B: the evaluator", "c": "Own part 3 of 3 of this task"}
	for id, sub := range mine {
		reqs := requestsOf(srv, "sim-"+id)
		if id == "a" {
			reqs = reqs[1:] // after the decomposer's call
		}
		first := reqs[0].Messages
		if u := first[len(first)-1].Content; !strings.HasPrefix(u, "[YOUR ASSIGNED SUBTASK: "+sub) {
			t.Errorf("%s's first turn: %.200s", id, u)
		}
		sys := first[0].Content
		for other, s := range mine {
			if other != id && !strings.Contains(sys, s) {
				t.Errorf("%s's system prompt does not show %s's subtask %q", id, other, s)
			}
		}
		if !strings.Contains(sys, "**YOUR ASSIGNED SUBTASK:**\n"+sub) || strings.Contains(sys, "`vote`") {
			t.Errorf("%s's system prompt:\n%.400s", id, sys)
		}
	}
	var note string
	for _, e := range rec.of(event.TypeActionRejected) {
		note += e.Reason
	}
	if !strings.Contains(note, "the task decomposition left out c: fallback subtasks for them") {
		t.Errorf("notes: %q", note)
	}
	pres := requestsOf(srv, "sim-b")
	last := pres[len(pres)-1].Messages
	if p := last[len(last)-1].Content; !strings.Contains(p, "AGENT WORK SUMMARIES:") || !strings.Contains(p, "**a** (subtask: SUB-A: the parser)\nStop summary: simulated stop: my subtask is done (complete)\nWork: ") ||
		!strings.Contains(p, "**c** (subtask: Own part 3 of 3") {
		t.Errorf("the presenter's prompt:\n%s", p)
	}
}

// A decomposer call that fails to give JSON leaves every agent without a
// subtask its fallback; with task_decomposer off, nothing is asked.
func TestDecomposerFallbackAndOff(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - text: 'I would rather not.'
`, "a", "b")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Decomposition: true, Presentation: coord.PresentNever}, Subtasks: &Subtasks{Decompose: true}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	b := requestsOf(srv, "sim-b")[0].Messages
	if u := b[len(b)-1].Content; !strings.HasPrefix(u, "[YOUR ASSIGNED SUBTASK: Own part 2 of 2 of this task") {
		t.Errorf("b's fallback subtask: %.200s", u)
	}
	srv, agents = simTeam(t, "", "a", "b")
	res, _ = run(t, agents, Options{Settings: coord.Settings{Decomposition: true, Presentation: coord.PresentNever}, Subtasks: &Subtasks{Given: map[string]string{"b": "SUB-B"}}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	a := requestsOf(srv, "sim-a")[0].Messages
	if u := a[len(a)-1].Content; strings.Contains(u, "decomposition plan") || strings.Contains(u, "YOUR ASSIGNED SUBTASK") {
		t.Errorf("with the decomposer off, a's first request: %.200s", u)
	}
}

func TestParseSubtasks(t *testing.T) {
	ids := []string{"a", "b"}
	for _, tc := range []struct {
		text string
		want map[string]string
	}{
		{`{"subtasks": {"a": "x", "b": {"subtask": " y "}}}`, map[string]string{"a": "x", "b": "y"}},
		{"Plan:\n```json\n{\"a\": \"x\"}\n```\ndone", map[string]string{"a": "x"}},
		{`{"subtasks": {"zed": "x"}}`, nil},
		{`no json`, nil},
	} {
		got, err := ParseSubtasks(tc.text, ids)
		if (err != nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Errorf("%q: %v, %v", tc.text, got, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.text, k, got[k], v)
			}
		}
	}
}

// Under checklist_gated, each agent in decomposition mode is scored on
// upstream's criteria for its own subtask (no inline criteria): its
// prompt lists them, its flat scores of its own work are accepted, and it
// stops on the verdict; the replayed inputs carry each agent's criteria.
func TestSubtaskCriteriaUnderTheChecklistGate(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	var inputs []coord.Input
	res, rec := run(t, agents, Options{Settings: coord.Settings{Decomposition: true, Presentation: coord.PresentNever,
		Checklist: &coord.Checklist{Threshold: 2}},
		Subtasks: &Subtasks{Given: map[string]string{"a": "SUB-A the parser", "b": "SUB-B the evaluator"}, Criteria: true},
		Trace:    func(in coord.Input, _ []coord.Command) { inputs = append(inputs, in) }})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	for _, id := range []string{"a", "b"} {
		reqs := requestsOf(srv, "sim-"+id)
		sys := reqs[len(reqs)-1].Messages[0].Content
		if !strings.Contains(sys, "E1: The current work substantially completes and improves the owned scope for this subtask: SUB-"+strings.ToUpper(id)) ||
			!strings.Contains(sys, "E5: This revision is a meaningful improvement") || strings.Contains(sys, "Requirements fidelity") {
			t.Errorf("%s's checklist section:\n%s", id, sys)
		}
	}
	var accepted, stops int
	for _, e := range rec.of(event.TypeToolCalled) {
		if e.Text == coord.ToolChecklist && strings.Contains(e.Result, "Checklist accepted. Verdict: stop.") {
			accepted++
		}
	}
	for _, e := range rec.of(event.TypeVoteAccepted) {
		if strings.HasPrefix(e.Reason, "stop (complete)") {
			stops++
		}
	}
	if accepted < 2 || stops < 2 {
		t.Errorf("%d checklists accepted with a stop verdict, %d stops", accepted, stops)
	}
	var per []string
	for _, in := range inputs {
		if c, ok := in.(coord.CriteriaSet); ok && c.Agent != "" && len(c.Criteria) == 5 {
			per = append(per, c.Agent)
		}
	}
	if strings.Join(per, ",") != "a,b" {
		t.Errorf("per-agent criteria fed for %v", per)
	}
}

// An agent the coordinator stops at its answer streak's cap is published
// like a stop it made: a vote for itself whose reason says why.
func TestAnAutoStopIsPublished(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, rec := run(t, agents, Options{Settings: coord.Settings{Decomposition: true, MaxAnswers: 1, Presentation: coord.PresentNever,
		FirstAnswers: coord.FirstAnswersEager}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	auto := 0
	for _, e := range rec.of(event.TypeVoteAccepted) {
		if strings.HasPrefix(e.Reason, "stop (complete): Auto-stopped: reached per-agent consecutive answer limit (1/1)") && e.Target == e.Agent {
			auto++
		}
	}
	if auto == 0 {
		t.Errorf("no auto-stop published: %v", rec.of(event.TypeVoteAccepted))
	}
}
