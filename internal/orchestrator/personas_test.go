package orchestrator

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// persona_generator on the simulator: the first agent writes a persona for
// each agent before the run; each agent's first turn (no peer answer
// shown) has its own persona before its system message, and never
// another's; once its turn shows another agent's answer, the persona is
// dropped, softened or kept as after_first_answer says. An unreadable
// reply gives every agent a fallback persona, and the run says so.
func TestPersonasLeadTheFirstTurnsThenFollowAfterFirstAnswer(t *testing.T) {
	reply := `{"personas": {"a": {"persona_text": "PERSONA-A: the end user first."}, "b": {"persona_text": "PERSONA-B: robustness above all."}, "c": "PERSONA-C: the simplest thing that works."}}`
	for _, tc := range []struct {
		after, reply string
		later        string // in a turn that shows a peer's answer ("" = no persona at all)
		fallback     bool
	}{
		{PersonaDrop, reply, "", false},
		{PersonaSoften, reply, "Your perspective at the start was:\nPERSONA-B", false},
		{PersonaKeep, reply, "PERSONA-B", false},
		{PersonaDrop, "I would rather not.", "", true},
	} {
		t.Run(tc.after+map[bool]string{true: "-fallback"}[tc.fallback], func(t *testing.T) {
			srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - text: '`+strings.ReplaceAll(tc.reply, "'", "''")+`'
`, "a", "b", "c")
			res, rec := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentNever},
				Personas: &Personas{Mode: PersonaPerspective, After: tc.after}})
			if res.Status != Completed {
				t.Fatalf("status = %s (%v)", res.Status, res.Err)
			}
			settled(t, srv)
			first := requestsOf(srv, "sim-a")[0].Messages
			if !strings.Contains(first[len(first)-1].Content, "PERSPECTIVE") || !strings.Contains(first[len(first)-1].Content, `["a","b","c"]`) {
				t.Errorf("the generator's prompt: %q", first[len(first)-1].Content)
			}
			want := "PERSONA-B"
			if tc.fallback {
				want = "inventive solution" // the second fallback persona
			}
			reqs := requestsOf(srv, "sim-b")
			if len(reqs) < 2 {
				t.Fatalf("b made %d requests; want its answer and a later turn", len(reqs))
			}
			sys := reqs[0].Messages[0].Content
			if !strings.HasPrefix(sys, "<persona>\n") || !strings.Contains(sys, want) || strings.Contains(sys, "PERSONA-A") || strings.Contains(sys, "PERSONA-C") {
				t.Errorf("b's first system prompt does not start with its own persona %q:\n%.300s", want, sys)
			}
			later := reqs[len(reqs)-1]
			if !strings.Contains(later.Messages[len(later.Messages)-1].Content, "agent1") {
				t.Fatalf("b's last turn shows no peer answer: %.300s", later.Messages[len(later.Messages)-1].Content)
			}
			lsys := later.Messages[0].Content
			switch {
			case tc.later == "" && strings.Contains(lsys, "<persona>"):
				t.Errorf("after_first_answer %s: b's later prompt still has a persona:\n%.300s", tc.after, lsys)
			case tc.later != "" && !strings.Contains(lsys, tc.later):
				t.Errorf("after_first_answer %s: b's later prompt lacks %q:\n%.300s", tc.after, tc.later, lsys)
			}
			var said bool
			for _, e := range rec.of(event.TypeActionRejected) {
				said = said || strings.Contains(e.Reason, "fallback personas")
			}
			if said != tc.fallback {
				t.Errorf("fallback note published = %v, want %v", said, tc.fallback)
			}
		})
	}
}

// A team of one has nobody to differ from: no persona call is made.
func TestASingleAgentGetsNoPersona(t *testing.T) {
	srv, agents := simTeam(t, "", "a")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentNever}, Personas: &Personas{}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	settled(t, srv)
	for _, r := range srv.Requests() {
		if strings.Contains(r.Messages[0].Content, "persona") {
			t.Errorf("a request about personas: %.200s", r.Messages[0].Content)
		}
	}
}
