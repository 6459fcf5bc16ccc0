package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
)

func TestUserMessageListsAnswersWithTheirLabels(t *testing.T) {
	tests := []struct {
		name     string
		feedback string
		answers  []coord.Answer
		want     []string
		wantNot  []string
	}{
		{
			name:    "no answers yet",
			want:    []string{"<ORIGINAL MESSAGE> What is the capital of France? <END OF ORIGINAL MESSAGE>", "(no answers available yet)", "<END OF CURRENT ANSWERS>"},
			wantNot: []string{"<agent1>", "PREVIOUS ATTEMPT"},
		},
		{
			name:    "answers under anonymous labels, never real ids",
			answers: twoAnswers,
			want:    []string{"<agent1> Paris. <end of agent1>", "<agent2> Paris, on the Seine. <end of agent2>"},
			wantNot: []string{"(no answers available yet)", "<a>", "<b>"},
		},
		{
			name:     "feedback comes first",
			feedback: "PREVIOUS ATTEMPT FEEDBACK\nadd the population",
			want:     []string{"add the population"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UserMessage("What is the capital of France?", tt.feedback, tt.answers)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
			if tt.feedback != "" && !strings.HasPrefix(got, tt.feedback) {
				t.Errorf("feedback is not first:\n%s", got)
			}
			if i, j := strings.Index(got, "<agent1>"), strings.Index(got, "<agent2>"); tt.answers != nil && (i < 0 || j < i) {
				t.Errorf("answers not in label order:\n%s", got)
			}
		})
	}
}

func TestUpdateMessageStartsWithUpdateAndRepeatsTheWholeSet(t *testing.T) {
	got := UpdateMessage(twoAnswers)
	if !strings.HasPrefix(got, "UPDATE:") {
		t.Errorf("does not start with UPDATE:\n%s", got)
	}
	for _, w := range []string{"<agent1> Paris. <end of agent1>", "<agent2> Paris, on the Seine. <end of agent2>", "vote"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	now := time.Date(2025, 3, 14, 15, 9, 0, 0, time.UTC)
	tests := []struct {
		name        string
		system      string
		sensitivity string
		novelty     string
		want        []string
		wantNot     []string
	}{
		{
			name: "agent identity comes first", system: "  You are a careful geographer.  ", sensitivity: "lenient",
			want: []string{"<agent_identity priority=\"critical\">\nYou are a careful geographer.\n</agent_identity>", sensitivity["lenient"]},
		},
		{
			name: "no identity block without a system message", system: "   ", sensitivity: "lenient",
			wantNot: []string{"agent_identity"},
		},
		{name: "lenient", sensitivity: "lenient", want: []string{sensitivity["lenient"]}, wantNot: []string{sensitivity["balanced"], sensitivity["strict"]}},
		{name: "balanced", sensitivity: "balanced", want: []string{sensitivity["balanced"]}, wantNot: []string{sensitivity["lenient"], sensitivity["strict"]}},
		{name: "strict", sensitivity: "strict", want: []string{sensitivity["strict"]}, wantNot: []string{sensitivity["lenient"], sensitivity["balanced"]}},
		{name: "unset sensitivity is lenient", sensitivity: "", want: []string{sensitivity["lenient"]}},
		{name: "unknown sensitivity is lenient", sensitivity: "paranoid", want: []string{sensitivity["lenient"]}},
		{name: "balanced novelty", novelty: "balanced", want: []string{"near-copies are rejected"}},
		{name: "strict novelty", novelty: "strict", want: []string{"differ substantially"}},
		{name: "lenient novelty says nothing", novelty: "lenient", wantNot: []string{"near-copies", "differ substantially"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SystemPrompt(tt.system, tt.sensitivity, tt.novelty, now)
			for _, w := range append(tt.want, "new_answer", "vote", "2025-03-14 15:09") {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
			if id, rules := strings.Index(got, "agent_identity"), strings.Index(got, "massgen_coordination"); id >= 0 && id > rules {
				t.Errorf("identity after the coordination rules:\n%s", got)
			}
		})
	}
}

func TestSensitivityLevelsHaveDistinctTexts(t *testing.T) {
	seen := map[string]string{}
	for _, lvl := range []string{"lenient", "balanced", "strict"} {
		txt := sensitivity[lvl]
		if txt == "" {
			t.Errorf("no text for %s", lvl)
		}
		if other, dup := seen[txt]; dup {
			t.Errorf("%s and %s share a text", lvl, other)
		}
		seen[txt] = lvl
	}
}

func TestPresentationUserMarksOnlyTheWinner(t *testing.T) {
	answers := []coord.Answer{
		{Label: "agent1", Agent: "alpha", Content: "Paris."},
		{Label: "agent2", Agent: "beta", Content: "Paris, on the Seine."},
		{Label: "agent3", Agent: "gamma", Content: "It is Paris."},
	}
	got := PresentationUser("What is the capital of France?", "beta", "You received 2 vote(s).", answers)
	if n := strings.Count(got, "(YOUR ANSWER)"); n != 1 {
		t.Errorf("(YOUR ANSWER) appears %d times, want once:\n%s", n, got)
	}
	for _, w := range []string{
		`beta (YOUR ANSWER): "Paris, on the Seine."`, `alpha: "Paris."`, `gamma: "It is Paris."`,
		"You received 2 vote(s).", "<ORIGINAL MESSAGE> What is the capital of France? <END OF ORIGINAL MESSAGE>",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "agent2") {
		t.Errorf("the presenter sees anonymous labels instead of real ids:\n%s", got)
	}
}

func TestPresentationSystemIncludesTheAgentsSystemMessage(t *testing.T) {
	if got := PresentationSystem("Answer in French."); !strings.Contains(got, "Answer in French.") || !strings.Contains(got, "final answer") {
		t.Errorf("PresentationSystem = %q", got)
	}
	if got := PresentationSystem("  "); strings.Contains(got, "## Instructions") {
		t.Errorf("blank system message still adds instructions: %q", got)
	}
}

func TestFeedbackBlockCarriesReasonInstructionsAndPreviousAnswer(t *testing.T) {
	got := FeedbackBlock("misses the population", "add it", "Paris.")
	for _, w := range []string{"PREVIOUS ATTEMPT FEEDBACK", "Reason: misses the population", "Instructions: add it", "Paris.", "END OF PREVIOUS ATTEMPT FEEDBACK"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

func TestPostEvalUserShowsTaskAndFinalAnswer(t *testing.T) {
	got := PostEvalUser("What is the capital?", "Paris.")
	for _, w := range []string{"<ORIGINAL MESSAGE> What is the capital? <END OF ORIGINAL MESSAGE>", "Paris.", "submit", "restart_orchestration"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}
