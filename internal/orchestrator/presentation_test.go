package orchestrator

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
)

// steps lists what the simulator did for each request, in order.
func steps(srv *llmsim.Server) []string {
	var s []string
	for _, r := range srv.Requests() {
		s = append(s, r.Step)
	}
	return s
}

// A single agent answers, reviews its answer (a vote) and stops: upstream
// has it present too, a third call that restates the answer it voted for.
func TestSingleAgentSkipsThePresentation(t *testing.T) {
	srv, agents := simTeam(t, "", "a")
	res, rec := run(t, agents, Options{})
	if res.Status != Completed || res.Winner != "a" || res.Fallback != "" {
		t.Fatalf("status=%s winner=%s fallback=%q err=%v", res.Status, res.Winner, res.Fallback, res.Err)
	}
	if got := steps(srv); !slices.Equal(got, []string{"answer", "vote"}) {
		t.Errorf("model calls = %v, want [answer vote]: no presentation", got)
	}
	if len(res.Answers) != 1 || res.Final != res.Answers[0].Content {
		t.Errorf("final = %q, want the agent's answer %+v", res.Final, res.Answers)
	}
	fin := rec.of(event.TypeFinalAnswer)
	if len(fin) != 1 || fin[0].Text != res.Final || !strings.Contains(fin[0].Reason, "single agent") {
		t.Errorf("final_answer events = %+v", fin)
	}
	if len(rec.of(event.TypeFinalStarted)) != 0 {
		t.Error("a final_started event was published for a presentation that did not happen")
	}
}

func TestPresentNeverMakesTheWinningAnswerFinal(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, rec := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentNever}})
	if res.Status != Completed || res.Winner != "a" {
		t.Fatalf("status=%s winner=%s err=%v", res.Status, res.Winner, res.Err)
	}
	if slices.Contains(steps(srv), "text") {
		t.Errorf("model calls = %v: a presentation was made", steps(srv))
	}
	var won string
	for _, a := range res.Answers {
		if a.Agent == res.Winner {
			won = a.Content
		}
	}
	if res.Final != won {
		t.Errorf("final = %q, want the winner's answer %q", res.Final, won)
	}
	if fin := rec.of(event.TypeFinalAnswer); len(fin) != 1 || !strings.Contains(fin[0].Reason, "disabled") {
		t.Errorf("final_answer events = %+v", fin)
	}
}

func TestPresentAlwaysPresentsForASingleAgent(t *testing.T) {
	srv, agents := simTeam(t, "", "a")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Presentation: coord.PresentAlways}})
	if got := steps(srv); !slices.Equal(got, []string{"answer", "vote", "text"}) {
		t.Errorf("model calls = %v, want [answer vote text]", got)
	}
	if res.Status != Completed || !strings.Contains(res.Final, "Final answer") {
		t.Errorf("status=%s final=%q, want the presentation text", res.Status, res.Final)
	}
}

// Client tools are offered only by the presentation, so a client that
// brought tools gets one even from a single agent.
func TestClientToolsKeepThePresentation(t *testing.T) {
	srv, agents := simTeam(t, "", "a")
	tool := llm.ToolDef{Name: "get_weather", Description: "weather", Parameters: map[string]any{"type": "object"}}
	run(t, agents, Options{ClientTools: []llm.ToolDef{tool}})
	reqs := srv.Requests()
	if len(reqs) != 3 || !slices.Contains(reqs[2].Tools, "get_weather") {
		t.Fatalf("model calls = %v, want a third (presentation) call offering get_weather", steps(srv))
	}
}

func TestDirectSingleAgentIsOnePlainCall(t *testing.T) {
	srv, agents := simTeam(t, "", "a")
	agents[0].SystemMessage = "Be brief."
	res, rec := run(t, agents, Options{Settings: coord.Settings{Direct: true}, History: []llm.Message{
		{Role: llm.RoleUser, Content: "Hi"}, {Role: llm.RoleAssistant, Content: "Hello!"}}})
	if res.Status != Completed || res.Winner != "a" || res.Final == "" {
		t.Fatalf("status=%s winner=%s final=%q err=%v", res.Status, res.Winner, res.Final, res.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %v, want exactly one", steps(srv))
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("the direct call offered tools %v; want none (no workflow tools)", reqs[0].Tools)
	}
	msgs := reqs[0].Messages
	if len(msgs) != 2 || msgs[0].Content != "Be brief." || !strings.Contains(msgs[1].Content, "Hello!") ||
		!strings.HasSuffix(msgs[1].Content, "What is the capital of France?") {
		t.Errorf("request messages = %+v, want the system message, then history and question", msgs)
	}
	if res.TotalUsage().OutputTokens == 0 {
		t.Error("usage was not counted")
	}
	deltas := ""
	for _, e := range rec.of(event.TypeFinalDelta) {
		deltas += e.Text
	}
	if strings.TrimSpace(deltas) != res.Final {
		t.Errorf("streamed %q, final %q: the answer was not streamed as the final answer", deltas, res.Final)
	}
}

func TestDirectIsIgnoredForATeam(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b")
	res, _ := run(t, agents, Options{Settings: coord.Settings{Direct: true}})
	if res.Status != Completed || len(srv.Requests()) < 4 {
		t.Fatalf("status=%s calls=%v: a team of two must coordinate", res.Status, steps(srv))
	}
	for _, r := range srv.Requests()[:2] {
		if !slices.Contains(r.Tools, "new_answer") {
			t.Errorf("first answers offered tools %v, want the workflow tools", r.Tools)
		}
	}
}

func TestDirectCallFailureFailsTheRun(t *testing.T) {
	_, agents := simTeam(t, `
defaults:
  always: {fault: "401"}
models: {}
`, "a")
	res, rec := run(t, agents, Options{Settings: coord.Settings{Direct: true}})
	if res.Status != Failed || res.Err == nil || !strings.Contains(res.Err.Error(), "agent a") || !strings.Contains(res.Err.Error(), "401") {
		t.Fatalf("status=%s err=%v, want failed naming the agent and the status", res.Status, res.Err)
	}
	if len(rec.of(event.TypeAgentFailed)) != 1 {
		t.Error("no agent_failed event")
	}
}

func TestDirectCallIsCancelledWithTheRun(t *testing.T) {
	srv, agents := simTeam(t, `
defaults:
  always: {fault: hang}
models: {}
`, "a")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_ = srv.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) == 1 })
		cancel()
	}()
	b := event.NewBroker()
	res := Run(ctx, "q", Options{Agents: agents, Settings: coord.Settings{Direct: true}, Events: b})
	b.Close()
	if res.Status != Interrupted {
		t.Fatalf("status = %s, want interrupted", res.Status)
	}
	waitAllCancelled(t, srv)
}
