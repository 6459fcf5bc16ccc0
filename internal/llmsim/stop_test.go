package llmsim

import "testing"

// A decomposition presenter's {answer} is every agent's work, as its
// prompt lists it.
func TestFindWorkReadsADecompositionPresentersPrompt(t *testing.T) {
	msg := "ORIGINAL TASK:\nq\n\nAGENT WORK SUMMARIES:\n**a** (subtask: x)\nStop summary: done (complete)\nWork: part A\nline 2\n\n" +
		"**b** (subtask: y)\nStop summary: No stop summary\nWork: (no work shared)\n\n**c** (subtask: z)\nStop summary: s\nWork: part C\n\n" +
		"Your job is to assemble the final deliverable."
	if got := findAnswer(msg); got != "part A\nline 2\n\npart C" {
		t.Errorf("findAnswer = %q", got)
	}
	if got := findWork(`a (YOUR ANSWER): "x"`); got != "" {
		t.Errorf("findWork of a voting prompt = %q", got)
	}
}
