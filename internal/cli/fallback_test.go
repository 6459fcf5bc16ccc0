package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hungPresentation is a team whose winner's presentation hangs (the
// simulator's hang fault), with a short deadline and grace: past them the
// winner's stored answer is the final answer.
var hungPresentation = map[string]string{
	"c.yaml": `agents:
  - {id: a, backend: {type: sim, model: sim-a, scenario: s.yaml}}
  - {id: b, backend: {type: sim, model: sim-b, scenario: s.yaml}}
timeout_settings: {orchestrator_timeout_seconds: 1.5, presentation_grace_seconds: 0.3}
`,
	"s.yaml": "defaults:\n  steps:\n    - {when: presentation, fault: hang}\n",
}

const graceFallback = "the presentation did not finish by the run deadline plus the presentation grace (300ms), so the winner's stored answer is the final answer"

// Past the deadline and the presentation grace the stored answer is the
// final answer, and the output says so (issue 8 §2): --automation keeps
// `RESULT: completed` (scripts match on it) and adds `FALLBACK: <reason>`;
// plain output notes it on stderr; status.json has results.fallback and
// results.grace_expired. Before, nothing told such an answer from a
// presented one.
func TestAStoredAnswerGivenAsFinalIsSaid(t *testing.T) {
	t.Run("automation", func(t *testing.T) {
		r := massgen(t, t.Context(), hungPresentation, nil, "--automation", "--config", "c.yaml", "q")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var answerFile string
		for _, l := range lines {
			if f, ok := strings.CutPrefix(l, "ANSWER_FILE: "); ok {
				answerFile = f
			}
		}
		for _, want := range []string{"RESULT: completed", "FALLBACK: " + graceFallback} {
			if !strings.Contains("\n"+r.stdout, "\n"+want+"\n") {
				t.Errorf("automation output lacks the line %q:\n%s", want, r.stdout)
			}
		}
		var st struct {
			Results struct {
				Winner       string `json:"winner"`
				Fallback     string `json:"fallback"`
				GraceExpired bool   `json:"grace_expired"`
			} `json:"results"`
		}
		data, err := os.ReadFile(filepath.Join(r.logDir(t), "status.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		if st.Results.Fallback != graceFallback || !st.Results.GraceExpired {
			t.Errorf("status.json results = %+v, want the fallback and grace_expired", st.Results)
		}
		answer, err := os.ReadFile(answerFile)
		if err != nil || !strings.Contains(string(answer), "sim-") {
			t.Errorf("ANSWER_FILE %s = %q (%v), want the winner's stored answer", answerFile, answer, err)
		}
	})
	t.Run("plain", func(t *testing.T) {
		r := massgen(t, t.Context(), hungPresentation, nil, "--no-logs", "--config", "c.yaml", "q")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if strings.TrimSpace(r.stdout) == "" || strings.Contains(r.stdout, "note:") {
			t.Errorf("stdout = %q, want only the answer", r.stdout)
		}
		if !strings.Contains(r.stderr, "note: "+graceFallback+"\n") {
			t.Errorf("stderr lacks the note:\n%s", r.stderr)
		}
	})
}
