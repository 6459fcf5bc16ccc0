package agent

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

var update = flag.Bool("update", false, "rewrite the prompt goldens in testdata/")

// The prompts are a compatibility contract: MassGen users' configs, and the
// models' behaviour, depend on their exact wording. Each golden file holds
// one prompt exactly as sent; a change must be deliberate (go test -update)
// and show up in review as a diff of the file.
func TestPromptGoldens(t *testing.T) {
	now := time.Date(2025, 3, 14, 15, 9, 0, 0, time.UTC)
	answers := []coord.Answer{
		{Label: "agent1", Agent: "researcher", Content: "Paris is the capital of France.", Rev: 1},
		{Label: "agent2", Agent: "critic", Content: "Paris, on the Seine; capital since 987.", Rev: 2},
	}
	prompts := map[string]string{
		"system_default":         SystemPrompt("", "", "", now),
		"system_identity_strict": SystemPrompt("You are a careful geographer.", "strict", "strict", now),
		"system_balanced":        SystemPrompt("Be brief.", "balanced", "balanced", now),
		"user_no_answers":        UserMessage("What is the capital of France?", "", nil),
		"user_answers":           UserMessage("What is the capital of France?", "", answers),
		"user_feedback_history": HistoryBlock([]llm.Message{
			{Role: llm.RoleUser, Content: "Name a European capital."},
			{Role: llm.RoleAssistant, Content: "Rome."},
		}) + UserMessage("And France's?", FeedbackBlock("Too short.", "Give the river too.", "Paris."), answers),
		"update":                    UpdateMessage(answers),
		"client_tools":              ToolsSection([]llm.ToolDef{{Name: "get_weather", Description: "Current weather for a city."}}),
		"presentation_system":       PresentationSystem("You are a careful geographer."),
		"presentation_system_plain": PresentationSystem(""),
		"presentation_user": PresentationUser("What is the capital of France?", "critic",
			"agent2 (critic): 2 votes\n- critic: \"adds the river\"", answers),
		"post_evaluation": PostEvalUser("What is the capital of France?", "Paris, on the Seine."),
		"enforcement":     coord.EnforcementMessage,
	}
	for name, got := range prompts {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s changed (-golden +now); if deliberate, run go test -update:\n%s", path, diff)
			}
		})
	}
}
