package agent

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/anthropic"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llm/gemini"
	"github.com/massgen/massgen/internal/llm/openai"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// wires builds, for each wire the simulator speaks, the official-SDK
// adapter that talks it, against the simulator at base (…/v1).
var wires = []struct {
	wire  string
	model func(base, name string) llm.Model
}{
	{llmsim.WireChat, func(base, name string) llm.Model {
		return chatcompat.New(chatcompat.Options{Provider: "sim", BaseURL: base, APIKey: "sim", Model: name, Stream: true})
	}},
	{llmsim.WireResponses, func(base, name string) llm.Model {
		return openai.New(openai.Options{BaseURL: base, APIKey: "sim", Model: name})
	}},
	{llmsim.WireAnthropic, func(base, name string) llm.Model {
		return anthropic.New(anthropic.Options{BaseURL: base, APIKey: "sim", Model: name})
	}},
	{llmsim.WireGemini, func(base, name string) llm.Model {
		return gemini.New(gemini.Options{BaseURL: strings.TrimSuffix(base, "/v1"), APIKey: "sim", Model: name})
	}},
}

// toolScenario: one add, then two calls in one response (add and lookup),
// each step checking the results of the previous one, then new_answer.
const toolScenario = `
models:
  tool-model:
    steps:
      - calls:
          - {name: add, arguments: '{"a":2,"b":3}'}
      - expect_results:
          - {name: add, contains: "5"}
        text: "Now the rest."
        calls:
          - {name: add, arguments: '{"a":5,"b":1}'}
          - {name: lookup, arguments: '{"country":"France"}'}
      - expect_results:
          - {name: add, contains: "6"}
          - {name: lookup, contains: "The capital of France is Paris."}
        answer: "The sum is 6 and the capital of France is Paris."
`

func TestTheToolLoopWorksOnEveryWire(t *testing.T) {
	for _, w := range wires {
		t.Run(w.wire, func(t *testing.T) {
			sim, base := simtest.Start(t, toolScenario)
			j := &judge{}
			turn := newTurn(w.model(base, "tool-model"), j, nil, 0)
			turn.Request.Model = "tool-model"
			turn.Request.Params = nil
			turn.Tools = tooltest.Set()
			res := turn.Run(t.Context())

			recs := sim.Requests()
			for _, r := range recs {
				if r.Problem != "" || r.Wire != w.wire {
					t.Errorf("request %d on %s: %s", r.ID, r.Wire, r.Problem)
				}
			}
			if res.Err != nil {
				t.Fatalf("turn failed: %v", res.Err)
			}
			want := coord.Action{Kind: coord.ActNewAnswer, Content: "The sum is 6 and the capital of France is Paris."}
			if res.Verdict.Outcome != coord.Accepted || res.Action != want || len(j.calls) != 1 {
				t.Errorf("Result = %+v, judged %+v; want the answer accepted once", res, j.calls)
			}
			if len(recs) != 3 || res.Steps != 2 || res.Attempts != 1 {
				t.Errorf("%d requests, %d steps, %d attempts; want 3, 2, 1", len(recs), res.Steps, res.Attempts)
			}
			if res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 {
				t.Errorf("usage = %+v, want the tokens of every step", res.Usage)
			}
		})
	}
}

func TestAWrongToolResultFailsTheSimulatorsRequestOnEveryWire(t *testing.T) {
	const wrong = `
models:
  tool-model:
    steps:
      - calls:
          - {name: add, arguments: '{"a":2,"b":2}'}
      - expect_results:
          - {name: add, contains: "5"}
        answer: "five"
`
	for _, w := range wires {
		t.Run(w.wire, func(t *testing.T) {
			sim, base := simtest.Start(t, wrong)
			turn := newTurn(w.model(base, "tool-model"), &judge{}, nil, 0)
			turn.Request.Model = "tool-model"
			turn.Request.Params = nil
			turn.Tools = tooltest.Set()
			res := turn.Run(t.Context())
			const problem = `expected a tool result of add containing "5"; the results were add: `
			if res.Err == nil || !strings.Contains(res.Err.Error(), problem) {
				t.Fatalf("Err = %v, want the simulator's 400 naming the mismatch", res.Err)
			}
			recs := sim.Requests()
			if len(recs) != 2 || recs[1].Outcome != llmsim.OutcomeRejected || !strings.Contains(recs[1].Problem, problem) {
				t.Errorf("records = %+v, want the second rejected with the problem", recs)
			}
		})
	}
}
