package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/tool"
)

// readBig returns about 5000 simulated tokens of text.
func readBig() tool.Tool {
	return tool.Func(llm.ToolDef{Name: "read_big", Description: "Read the big file.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{}}},
		func(context.Context, json.RawMessage) (string, error) { return strings.Repeat("lorem ", 4000), nil })
}

// A tool result that makes the conversation outgrow the model's window:
// the provider refuses the next request in its own words (the simulator's
// context_window), the turn has its older part summarised by the same
// model, and tries again with the summary in place of it — on every wire,
// through the official SDKs. The summary's tokens are the agent's.
func TestAContextOverflowCompactsTheTurnAndGoesOnOnEveryWire(t *testing.T) {
	const scenario = `
models:
  small-window:
    context_window: 2000
    final: "SUMMARY: the agent read the big file; it is lorem ipsum and nothing else."
    steps:
      - calls:
          - {name: read_big, arguments: '{}'}
      - when: coordination
        answer: "The file is filler text."
`
	for _, w := range wires {
		t.Run(w.wire, func(t *testing.T) {
			sim, base := simtest.Start(t, scenario)
			j := &judge{}
			turn := newTurn(w.model(base, "small-window"), j, nil, 0)
			turn.Request.Model, turn.Request.Params = "small-window", nil
			set, err := tool.NewSet(readBig())
			if err != nil {
				t.Fatal(err)
			}
			turn.Tools = set
			res := turn.Run(t.Context())
			if res.Err != nil {
				t.Fatalf("the turn failed: %v", res.Err)
			}
			if want := (coord.Action{Kind: coord.ActNewAnswer, Content: "The file is filler text."}); res.Action != want {
				t.Errorf("action %+v, want %+v", res.Action, want)
			}
			recs := sim.Requests()
			if len(recs) != 4 {
				t.Fatalf("%d requests, want 4 (tool step, refused, summary, retry): %+v", len(recs), recs)
			}
			if recs[1].Step != llmsim.StepContextOverflow || recs[1].PromptTokens <= 2000 {
				t.Errorf("request 2 = %+v, want refused as too long", recs[1])
			}
			sum := recs[2]
			if len(sum.Tools) != 0 || !anyContent(sum.Messages, "Here is the conversation to summarize") || !anyContent(sum.Messages, "[tool result]") {
				t.Errorf("the summary request %+v does not carry the compacted conversation without tools", sum.Messages)
			}
			retry := recs[3]
			if retry.Outcome != llmsim.OutcomeCompleted || retry.PromptTokens > 2000 ||
				!anyContent(retry.Messages, "[CONTEXT RECOVERY]") || !anyContent(retry.Messages, "SUMMARY: the agent read the big file") ||
				!anyContent(retry.Messages, "USER MESSAGE") || anyContent(retry.Messages, strings.Repeat("lorem ", 100)) {
				t.Errorf("the retry (%d tokens) is not the task, the summary and nothing of the big result: %+v", retry.PromptTokens, retry.Messages)
			}
			if want := recs[0].PromptTokens + sum.PromptTokens + retry.PromptTokens; res.Usage.InputTokens != int64(want) {
				t.Errorf("input tokens %d, want %d (every request that ran, the summary's included)", res.Usage.InputTokens, want)
			}
		})
	}
}

// A turn whose prompt alone does not fit has nothing to compact: it fails
// at once, with the provider's error and what it means.
func TestAPromptThatCannotFitFailsWithoutASummary(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  tiny:\n    context_window: 5\n")
	turn := newTurn(wires[0].model(base, "tiny"), &judge{}, nil, 0)
	turn.Request.Model, turn.Request.Params = "tiny", nil
	res := turn.Run(t.Context())
	pe, ok := errors.AsType[*llm.Error](res.Err)
	if !ok || pe.Status != 400 || !strings.Contains(res.Err.Error(), "does not fit the model's context window") {
		t.Fatalf("Err = %v, want the provider's 400 and what it means", res.Err)
	}
	if f := FailureOf(res.Err, "a", "sim", "tiny"); f.Kind != coord.FailBadRequest || f.Retryable {
		t.Errorf("failure %+v, want a bad request, not retried", f)
	}
	if recs := sim.Requests(); len(recs) != 1 {
		t.Errorf("%d requests, want the one refused", len(recs))
	}
}

func anyContent(msgs []llmsim.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// The newest answer set stays in view whole: when the message that showed
// it is among those summarised, the retry shows it again.
func TestCompactionKeepsTheNewestAnswersInView(t *testing.T) {
	const scenario = `
models:
  small-window:
    context_window: 2000
    final: "SUMMARY: read the big file."
    steps:
      - calls:
          - {name: read_big, arguments: '{}'}
      - when: coordination
        vote: agent3
        reason: "has the population"
`
	sim, base := simtest.Start(t, scenario)
	updates := NewInbox()
	newer := []coord.Answer{twoAnswers[0], twoAnswers[1], {Label: "agent3", Agent: "c", Content: "Paris (pop. 2.1 million).", Rev: 1}}
	updates.Post(Update{Epoch: 3, Answers: newer})
	turn := newTurn(wires[0].model(base, "small-window"), &judge{}, twoAnswers, 2)
	turn.Request.Model, turn.Request.Params = "small-window", nil
	turn.Updates = updates
	set, _ := tool.NewSet(readBig())
	turn.Tools = set
	if res := turn.Run(t.Context()); res.Err != nil || res.Action.Kind != coord.ActVote {
		t.Fatalf("Result = %+v", res)
	}
	recs := sim.Requests()
	retry := recs[len(recs)-1]
	last := retry.Messages[len(retry.Messages)-1]
	if !anyContent(retry.Messages, "[CONTEXT RECOVERY]") || last.Role != "user" || !strings.Contains(last.Content, "<agent3> Paris (pop. 2.1 million).") {
		t.Errorf("the retry does not end with the newest answers: %+v", retry.Messages)
	}
}
