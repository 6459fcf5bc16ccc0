package orchestrator

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// evaluation_criteria_generator on the simulator: the first agent writes
// the criteria before the run starts; they reach the machine as its first
// input (so the log replays with them) and the gated agents' prompts.
// Unusable criteria fall back to the generic ones, and the run says so.
func TestGeneratedCriteriaReachTheMachineAndThePrompts(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        string // in the agents' system prompt
		fallback    bool
	}{
		{"generated", "Here you are:\n```json\n" + `{"aspiration": "a precise answer", "criteria": [{"text": "Names the city", "category": "must"}, {"text": "Explains why it is the capital", "category": "primary"}, {"text": "Gives a date", "category": "could"}]}` + "\n```",
			"E2 [PRIMARY]: Explains why it is the capital", false},
		{"fallback", `{"criteria": [{"text": "Only one"}]}`, "E3 [PRIMARY]: Per-part depth", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - text: '`+strings.ReplaceAll(tc.reply, "'", "''")+`'
`, "a", "b")
			var inputs []coord.Input
			res, rec := run(t, agents, Options{
				Settings: coord.Settings{Checklist: &coord.Checklist{Generate: true, MinCriteria: 2, MaxCriteria: 3}, Presentation: coord.PresentNever},
				Trace:    func(in coord.Input, _ []coord.Command) { inputs = append(inputs, in) },
			})
			if res.Status != Completed {
				t.Fatalf("status = %s (%v)", res.Status, res.Err)
			}
			settled(t, srv)
			_, set := inputs[0].(coord.CriteriaSet)
			if set == tc.fallback {
				t.Errorf("first input %s, want criteria only when generated", coord.DescribeInput(inputs[0]))
			}
			if set && coord.DescribeInput(inputs[0]) != `criteria "standard: Names the city" "primary: Explains why it is the capital" "stretch: Gives a date"` {
				t.Errorf("criteria input: %s", coord.DescribeInput(inputs[0]))
			}
			reqs := requestsOf(srv, "sim-b")
			if len(reqs) == 0 || !strings.Contains(reqs[0].Messages[0].Content, tc.want) {
				t.Errorf("b's system prompt lacks %q", tc.want)
			}
			var said bool
			for _, e := range rec.of(event.TypeActionRejected) {
				said = said || strings.Contains(e.Reason, "fallback criteria")
			}
			if said != tc.fallback {
				t.Errorf("fallback note published = %v, want %v", said, tc.fallback)
			}
		})
	}
}
