package orchestrator

import (
	"context"
	"iter"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// Nothing published is left unrendered, nothing rendered is never
// published: runs that between them meet every situation (agent tools, a
// restarted turn, reasoning, a rejected action, failures, a budget stop,
// the deadline, a post-evaluation restart) publish every event type there
// is, and Describe says each of them (in words, unless it is streamed text).
func TestEveryEventTypeIsPublishedAndDescribed(t *testing.T) {
	seen := map[event.Type]bool{}
	check := func(t *testing.T, rec *recorder) {
		t.Helper()
		for _, r := range rec.events {
			e, err := event.FromRecord(r)
			if err != nil {
				t.Errorf("published %s does not read back: %v", r.Type, err)
				continue
			}
			seen[e.Type()] = true
			d := event.Describe(e)
			if slices.Contains(event.Deltas, e.Type()) != (d == "") || d == string(e.Type()) {
				t.Errorf("Describe(%s) = %q: want words, or \"\" for streamed text only", e.Type(), d)
			}
		}
	}

	t.Run("agent tools", func(t *testing.T) {
		_, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - calls: [{name: add, arguments: '{"a":2,"b":3}'}]
      - answer: "2 + 3 = 5"
`, "a", "b")
		agents[0].Tools = tooltest.Set()
		res, rec := run(t, agents, Options{})
		if res.Status != Completed {
			t.Fatalf("status = %s (%v)", res.Status, res.Err)
		}
		check(t, rec)
		if len(rec.of(event.TypeToolCalled)) != 1 {
			t.Errorf("tool events = %+v, want one", rec.of(event.TypeToolCalled))
		}
	})
	for _, sc := range []struct {
		name     string
		agents   func() []Agent
		settings coord.Settings
		want     []event.Type // what the situation is there for
	}{
		{"a newer answer restarts a thinking agent's turn", func() []Agent {
			team := fakeTeam(fake("a", fakeReply{}, fakeReply{hang: true}), fake("b", fakeReply{answer: "b's answer", delay: 300 * time.Millisecond}))
			team[0].Model = thinking{team[0].Model}
			return team
		}, coord.Settings{FirstAnswers: coord.FirstAnswersEager}, []event.Type{event.TypeTurnRestarted, event.TypeReasoningDelta, event.TypeTextDelta}},
		{"a turn without a workflow action is rejected", func() []Agent {
			return fakeTeam(fake("a", fakeReply{when: "turn", text: "no tool call"}), fake("b"))
		}, coord.Settings{}, []event.Type{event.TypeActionRejected}},
		{"an agent that keeps failing leaves", func() []Agent {
			return fakeTeam(fake("a"), fake("b"), fakeAlways("c", fakeReply{err: &llm.Error{Provider: "fake", Status: 500, Message: "boom"}}))
		}, coord.Settings{FailureBudget: 2}, []event.Type{event.TypeTurnFailed, event.TypeAgentFailed}},
		{"the budget stops coordination", func() []Agent {
			return fakeTeam(fake("a"), fake("b", fakeReply{answer: "slow", delay: 5 * time.Second}))
		}, coord.Settings{MaxTokens: 1}, []event.Type{event.TypeBudgetExceeded}},
		{"the run deadline passes", func() []Agent {
			return fakeTeam(fake("a"), fakeAlways("b", fakeReply{hang: true}))
		}, coord.Settings{Timeout: 700 * time.Millisecond}, []event.Type{event.TypeTimeout}},
		{"post-evaluation restarts the run", func() []Agent {
			return fakeTeam(fake("a", fakeReply{answer: "first"}, fakeReply{vote: "agent1"}, fakeReply{text: "first final"},
				fakeReply{restart: "it misses the population"}))
		}, coord.Settings{MaxRestarts: 1, Presentation: coord.PresentAlways}, []event.Type{event.TypePostEvaluation, event.TypeRunRestarted}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, rec := run(t, sc.agents(), Options{Settings: sc.settings})
				if res.Status != Completed {
					t.Fatalf("status = %s (%v)", res.Status, res.Err)
				}
				check(t, rec)
				for _, typ := range sc.want {
					if len(rec.of(typ)) == 0 {
						t.Errorf("no %s event", typ)
					}
				}
			})
		})
	}
	for _, typ := range event.Types {
		if !seen[typ] {
			t.Errorf("no run published a %s event", typ)
		}
	}
}

// thinking is a model that streams some reasoning and some text before
// whatever its inner model answers, as reasoning models do.
type thinking struct{ llm.Model }

func (m thinking) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	inner := m.Model.Stream(ctx, req)
	return func(yield func(llm.Chunk, error) bool) {
		if !yield(llm.Chunk{Kind: llm.ChunkReasoning, Text: "let me think"}, nil) ||
			!yield(llm.Chunk{Kind: llm.ChunkText, Text: "thinking aloud "}, nil) {
			return
		}
		for c, err := range inner {
			if !yield(c, err) {
				return
			}
		}
	}
}
