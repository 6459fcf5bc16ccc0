package coord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseScoresReadsTheFormsModelsSend(t *testing.T) {
	want := map[string]map[string]float64{"agent1": {"E1": 8, "E2": 9.5}}
	for _, tc := range []struct{ name, raw, only string }{
		{"numbers", `{"agent1": {"E1": 8, "E2": 9.5}}`, ""},
		{"score objects", `{"agent1": {"E1": {"score": 8, "reasoning": "ok"}, "E2": {"score": 9.5}}}`, ""},
		{"a JSON string", `"{\"agent1\": {\"E1\": 8, \"E2\": 9.5}}"`, ""},
		{"flat, one answer", `{"E1": 8, "E2": 9.5}`, "agent1"},
	} {
		got, err := ParseScores(json.RawMessage(tc.raw), tc.only)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	for _, tc := range []struct{ name, raw, only, why string }{
		{"not an object", `[1, 2]`, "", "must be an object"},
		{"flat with two answers", `{"E1": 8}`, "", "only allowed when there is one answer"},
		{"out of range", `{"agent1": {"E1": 11}}`, "", "from 0 to 10"},
		{"not a number", `{"agent1": {"E1": "high"}}`, "", "from 0 to 10"},
	} {
		if _, err := ParseScores(json.RawMessage(tc.raw), tc.only); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.why)
		}
	}
}

// The hidden bar: voting_threshold 2 at the start of a run needs 9/10 on
// every core criterion (upstream's documented example); it eases as the
// agent's answer budget runs out, and the extended gate then lets some core
// criteria fail (upstream always needs every one: a bug).
func TestGateBarEasesAsTheAnswerBudgetRunsOut(t *testing.T) {
	for _, tc := range []struct {
		threshold, answers, max int
		et, cutoff, required, n int
	}{
		{2, 0, 5, 1, 9, 4, 4},   // 5 of 5 left: -1
		{2, 1, 5, 1, 9, 4, 4},   // 4 of 5 left (80 %): -1
		{2, 2, 5, 2, 9, 4, 4},   // 3 of 5 left (60 %)
		{2, 3, 5, 4, 8, 3, 4},   // 2 left: +2
		{3, 2, 5, 3, 8, 3, 4},   // fast_iteration's threshold, 3 left
		{0, 0, 0, 4, 8, 3, 4},   // default threshold 5 and budget 5, at the start: -1
		{10, 4, 5, 10, 5, 2, 4}, // the most lenient bar: half the core criteria
	} {
		m := New(Config{Agents: []string{"a"}, Settings: Settings{MaxAnswers: tc.max, Checklist: &Checklist{Threshold: tc.threshold}}})
		a := m.byID["a"]
		for range tc.answers {
			a.answers = append(a.answers, "x")
		}
		et, cutoff, required := m.gateBar(a, tc.n)
		if et != tc.et || cutoff != tc.cutoff || required != tc.required {
			t.Errorf("threshold %d, %d of %d answers: et %d cutoff %d required %d; want %d %d %d",
				tc.threshold, tc.answers, tc.max, et, cutoff, required, tc.et, tc.cutoff, tc.required)
		}
	}
}
