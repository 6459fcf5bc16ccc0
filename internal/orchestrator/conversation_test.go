package orchestrator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

func TestHistoryIsShownToEveryAgentAndThePresenter(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, _ := run(t, agents, Options{History: []llm.Message{
		{Role: llm.RoleUser, Content: "What is the capital of Italy?"},
		{Role: llm.RoleAssistant, Content: "Rome."},
	}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	for _, r := range srv.Requests() {
		user := r.Messages[1].Content
		if !strings.Contains(user, "<CONVERSATION_HISTORY>\nUser: What is the capital of Italy?\nAssistant: Rome.\n<END OF CONVERSATION_HISTORY>") {
			t.Errorf("request %d (%s) lacks the history:\n%s", r.ID, r.Step, user)
		}
	}
}

func TestClientToolCalledByThePresenterEndsTheRunWithTheCall(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - answer: "Call get_weather for Paris."
      - vote: agent1
      - calls:
          - name: get_weather
            arguments: '{"city":"Paris"}'
`, "a")
	weather := llm.ToolDef{Name: "get_weather", Description: "Current weather for a city",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}
	res, _ := run(t, agents, Options{ClientTools: []llm.ToolDef{weather}})
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" || res.ToolCalls[0].Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	if res.Final != "" || res.Fallback != "" {
		t.Errorf("final = %q fallback = %q, want the tool call alone", res.Final, res.Fallback)
	}
	reqs := srv.Requests()
	// Coordinating agents are told about the tool but cannot call it.
	if diff := cmp.Diff([]string{"new_answer"}, reqs[0].Tools); diff != "" {
		t.Errorf("coordination tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "- get_weather: Current weather for a city") {
		t.Errorf("system prompt does not describe the client tool:\n%s", reqs[0].Messages[0].Content)
	}
	if diff := cmp.Diff([]string{"get_weather"}, reqs[2].Tools); diff != "" {
		t.Errorf("presentation tools (-want +got):\n%s", diff)
	}
}

// A resumed turn's seeded answer is accepted before any turn starts, every
// agent's first request already shows it, and its agent is never asked for
// an answer: with the simulator's default policy everyone votes.
func TestSeededAnswersAreNotAskedForAgain(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, rec := run(t, agents, Options{Seed: []coord.Seed{{Agent: "a", Content: "Paris, kept from the interrupted turn."}}})
	if res.Status != Completed || res.Winner != "a" {
		t.Fatalf("status = %s, winner %q (%v)", res.Status, res.Winner, res.Err)
	}
	for _, r := range srv.Requests() {
		if r.Step == "answer" {
			t.Errorf("request %d (%s) was asked for an answer", r.ID, r.Model)
		}
	}
	var types []event.Type
	for _, e := range rec.events {
		types = append(types, e.Type)
	}
	if len(rec.events) < 2 || rec.events[1].Type != event.TypeAnswerAccepted || rec.events[1].Agent != "a" || rec.events[1].Label != "agent1.1" {
		t.Errorf("events begin %v; want run_started then a's seeded answer agent1.1", types[:min(4, len(types))])
	}
}
