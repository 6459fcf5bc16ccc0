package localmodel

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// Teams of models that cannot call tools, on the simulator's tool-blind
// models (ignore_tools: the request's tools are dropped, as SmolLM2's
// chat template drops them): with the default mode (auto) a local
// backend finds that out from /props and asks through the schema; with
// workflow_actions: text the replies are ANSWER:/VOTE: lines. Each team
// must finish with a winner chosen by votes, and no coordination request
// may have carried tools.
func TestToolBlindTeamsCompleteOnTheSimulator(t *testing.T) {
	const scenario = `
models:
  blind-a: {ignore_tools: true}
  blind-b: {ignore_tools: true}
  blind-c: {ignore_tools: true}
  texter-a:
    ignore_tools: true
    steps:
      - {text: "ANSWER: Paris is the capital of France."}
      - {text: "I would go with the first one."}
      - {text: "VOTE: agent 1\nREASON: it is correct and complete"}
  texter-b:
    ignore_tools: true
    steps:
      - {text: "Let me think.\nANSWER: Paris, on the Seine."}
      - {text: "**Vote:** Agent1\n**Reason:** correct"}
`
	for _, c := range []struct {
		name, agents string
		schema       bool
	}{
		{"auto on three local backend types", `
  - {id: a, backend: {type: lmstudio, model: blind-a, base_url: %[1]q}}
  - {id: b, backend: {type: vllm, model: blind-b, base_url: %[1]q}}
  - {id: c, backend: {type: chatcompletion, model: blind-c, base_url: %[1]q}}`, true},
		{"text mode", `
  - {id: a, backend: {type: sglang, model: texter-a, base_url: %[1]q, workflow_actions: text}}
  - {id: b, backend: {type: chatcompletion, model: texter-b, base_url: %[1]q, workflow_actions: text}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim, base := simtest.Start(t, scenario)
			config := fmt.Sprintf("agents:"+c.agents+"\norchestrator: {max_new_answers_per_agent: 1}\n", base)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := massgen.Run(ctx, "What is the capital of France?", massgen.Options{
				ConfigYAML: []byte(config), NoLogs: true, WorkDir: t.TempDir(), Getenv: func(string) string { return "" },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != massgen.Completed || res.Winner == "" {
				t.Fatalf("status %s, winner %q, error %v, failures %+v", res.Status, res.Winner, res.Err, res.Failures)
			}
			votes := 0
			for _, n := range res.Votes {
				votes += n
			}
			if votes == 0 {
				t.Errorf("winner %s chosen without votes (%s)", res.Winner, res.How)
			}
			coordination := 0
			for _, r := range sim.Requests() {
				system := ""
				if len(r.Messages) > 0 {
					system = r.Messages[0].Content
				}
				if !strings.Contains(system, "## How to reply") {
					continue // a presentation or an evaluation
				}
				coordination++
				if len(r.Tools) != 0 || r.JSONSchema != c.schema {
					t.Errorf("request %d (%s): tools %v, response_format schema %v; want none and %v", r.ID, r.Model, r.Tools, r.JSONSchema, c.schema)
				}
			}
			if coordination == 0 {
				t.Fatal("no coordination request asked for the action without tools")
			}
		})
	}
}

// workflow_actions other than native is for the Chat Completions backends:
// elsewhere the run refuses to start, naming the key.
func TestWorkflowActionsOnAnotherWireIsRefused(t *testing.T) {
	_, err := massgen.Run(context.Background(), "hi", massgen.Options{
		ConfigYAML: []byte("agents:\n  - {id: a, backend: {type: claude, model: claude-sonnet-4-5, workflow_actions: text}}\n"),
		NoLogs:     true, WorkDir: t.TempDir(),
		Getenv: func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "sk-test"}[k] },
	})
	if err == nil || !strings.Contains(err.Error(), "workflow_actions") || !strings.Contains(err.Error(), "Chat Completions") {
		t.Fatalf("err = %v, want a refusal naming workflow_actions", err)
	}
}
