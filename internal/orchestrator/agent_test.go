package orchestrator

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// scripted is an agent that is not an LLM: it answers once with a fixed
// text, then votes for its own answer's label, and presents a fixed final
// answer. It talks to the orchestrator only through agent.Agent: tasks in,
// outcomes out, verdicts read from its inbox.
type scripted struct {
	answer, final string
	mu            sync.Mutex
	tasks         []agent.TaskKind
	verdicts      []coord.Verdict
	states        []string // the State each task was given
}

func (s *scripted) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		s.mu.Lock()
		s.tasks = append(s.tasks, task.Kind)
		s.states = append(s.states, string(task.State))
		n := len(s.tasks)
		s.mu.Unlock()
		// It remembers between tasks only through State: how many tasks
		// it has played so far.
		state := []byte(fmt.Sprintf("played %d", n))
		switch task.Kind {
		case agent.TaskCoordinate:
			act := coord.Action{Kind: coord.ActNewAnswer, Content: s.answer}
			if i := slices.IndexFunc(task.Answers, func(a coord.Answer) bool { return a.Content == s.answer }); i >= 0 {
				act = coord.Action{Kind: coord.ActVote, Label: task.Answers[i].Label, Reason: "mine is complete"}
			}
			if !yield(agent.Text{Text: "thinking it over"}) ||
				!yield(agent.ToolUsed{Tool: "lookup", Args: `{"q":"capital"}`, Result: "Paris", Duration: time.Millisecond}) ||
				!yield(agent.Propose{Seen: task.Epoch, Action: act}) {
				return
			}
			v := inbox.Verdict(ctx)
			s.mu.Lock()
			s.verdicts = append(s.verdicts, v)
			s.mu.Unlock()
			yield(agent.Done{Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, State: state})
		case agent.TaskPresent:
			if yield(agent.Text{Text: s.final}) {
				yield(agent.Done{Text: s.final, Usage: llm.Usage{InputTokens: 20, OutputTokens: 7}, State: state})
			}
		default:
			yield(agent.Done{})
		}
	}
}

func TestAScriptedAgentRunsThroughTheSameInterfaceInAFullRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{answer: "Paris, the scripted answer.", final: "Paris (final, scripted)."}
		// First in config order: its answer is agent1, which the fake
		// models vote for by default, so it wins and presents.
		team := append([]Agent{{ID: "script", Backend: "script", Impl: s}}, fakeTeam(fake("b"), fake("c"))...)
		res, rec := run(t, team, Options{})
		if res.Status != Completed || res.Winner != "script" {
			t.Fatalf("status %s, winner %q (%v); want completed with the scripted agent", res.Status, res.Winner, res.Err)
		}
		if res.Final != s.final || res.Fallback != "" {
			t.Errorf("final %q (fallback %q), want the scripted presentation", res.Final, res.Fallback)
		}
		var mine []event.Record
		for _, a := range rec.of(event.TypeAnswerAccepted) {
			if a.Agent == "script" {
				mine = append(mine, a)
			}
		}
		if len(mine) != 1 || mine[0].Text != s.answer {
			t.Errorf("scripted answers accepted: %+v, want its one answer", mine)
		}
		if res.Tally["script"] != 3 {
			t.Errorf("tally %v, want 3 votes for the scripted agent (its own included)", res.Tally)
		}
		var tools, texts int
		for _, r := range rec.of(event.TypeToolCalled) {
			if r.Agent == "script" && r.Text == "lookup" && r.Result == "Paris" {
				tools++
			}
		}
		for _, r := range rec.of(event.TypeTextDelta) {
			if r.Agent == "script" {
				texts++
			}
		}
		if tools == 0 || texts == 0 {
			t.Errorf("the scripted agent's tool call and text became %d tool_called and %d text_delta events, want some of each", tools, texts)
		}
		if u := res.Usage["script"]; u.InputTokens < 30 || u.OutputTokens < 12 {
			t.Errorf("scripted usage %+v, want its turns' and presentation's tokens counted", u)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.tasks[len(s.tasks)-1] != agent.TaskPresent || s.tasks[0] != agent.TaskCoordinate {
			t.Errorf("tasks %v, want coordination turns, then the presentation", s.tasks)
		}
		// Each task got the State its previous one returned.
		for i, got := range s.states {
			want := ""
			if i > 0 {
				want = fmt.Sprintf("played %d", i)
			}
			if got != want {
				t.Errorf("task %d was given state %q, want %q", i+1, got, want)
			}
		}
		if len(s.verdicts) == 0 || s.verdicts[0].Outcome != coord.Accepted || s.verdicts[0].Label != "agent1" {
			t.Errorf("verdicts read from the inbox: %+v, want its answer accepted as agent1", s.verdicts)
		}
	})
}

func TestAProviderFailureIsDataFromTheAgentToTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := fakeAlways("a", fakeReply{err: &llm.Error{Provider: "openai", Model: "gpt-4o", Status: 401, Message: "invalid api key"}})
		b := fakeAlways("b", fakeReply{err: &llm.Error{Provider: "groq", Model: "llama", Status: 429, Retry: true, Message: "slow down"}})
		res, rec := run(t, fakeTeam(a, b), Options{Settings: coord.Settings{FailureBudget: 1}})
		if res.Status != Failed {
			t.Fatalf("status = %s, want failed", res.Status)
		}
		want := []coord.Failure{
			{Kind: coord.FailAuth, Agent: "a", Provider: "openai", Model: "gpt-4o", Status: 401, Message: "openai model gpt-4o: HTTP 401: invalid api key"},
			{Kind: coord.FailRateLimit, Agent: "b", Provider: "groq", Model: "llama", Status: 429, Retryable: true, Message: "groq model llama: HTTP 429: slow down"},
		}
		if !slices.Equal(res.Failures, want) {
			t.Errorf("Result.Failures =\n%+v\nwant\n%+v", res.Failures, want)
		}
		for _, typ := range []event.Type{event.TypeTurnFailed, event.TypeAgentFailed} {
			got := rec.of(typ)
			if len(got) != 2 {
				t.Fatalf("%d %s events, want 2", len(got), typ)
			}
			for _, r := range got { // the two agents fail in either order
				i := slices.IndexFunc(want, func(f coord.Failure) bool { return f.Agent == r.Agent })
				if i < 0 || r.Failure == nil || *r.Failure != want[i] {
					t.Errorf("%s of %s carries %#v", typ, r.Agent, r.Failure)
				}
			}
		}
		fin := rec.of(event.TypeRunFinished)
		if len(fin) != 1 || !slices.Equal(fin[0].Failures, want) {
			t.Errorf("run_finished failures %+v, want %+v", fin, want)
		}
	})
}

// Every request an agent makes to its model is an event of its own (for
// tracing: a span per model call): as many as the simulator answered, and
// together they cost what the run cost.
func TestEachModelRequestIsAnEvent(t *testing.T) {
	srv, agents := simTeam(t, "", "a", "b", "c")
	res, rec := run(t, agents, Options{})
	if res.Status != Completed {
		t.Fatalf("status %s (%v)", res.Status, res.Err)
	}
	calls := rec.of(event.TypeModelCalled)
	settled(t, srv)
	if got, want := len(calls), len(srv.Requests()); got != want || got == 0 {
		t.Errorf("%d model_called events, %d requests the simulator answered", got, want)
	}
	var in, out int64
	for _, c := range calls {
		if c.Agent == "" || !strings.HasPrefix(c.Text, "sim-") || c.DurationMS <= 0 {
			t.Errorf("model_called %+v lacks its agent, model or duration", c)
		}
		in, out = in+c.InputTokens, out+c.OutputTokens
	}
	if u := res.TotalUsage(); in != u.InputTokens || out != u.OutputTokens {
		t.Errorf("model_called events add up to %d in, %d out; the run used %d, %d", in, out, u.InputTokens, u.OutputTokens)
	}
}
