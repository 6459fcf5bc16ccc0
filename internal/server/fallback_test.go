package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// Past the run deadline and the presentation grace, the winner's stored
// answer is the answer, and the response says so (issue 8 §2): the
// `massgen` object of a completion, and of a stream's last chunk, carries
// the fallback and grace_expired; a stream also says it as a progress note.
func TestTheResponseSaysWhenTheStoredAnswerIsFinal(t *testing.T) {
	f := start(t, setup{configs: map[string]string{
		"hang.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a, scenario: every.hang}}\n  - {id: b, backend: {type: sim, model: sim-b, scenario: every.hang}}\n" +
			"timeout_settings: {orchestrator_timeout_seconds: 1.5, presentation_grace_seconds: 0.3}\n",
		"every.hang": "defaults:\n  steps:\n    - {when: presentation, fault: hang}\n", // every presentation hangs
	}})
	type ext struct {
		Fallback     string `json:"fallback"`
		GraceExpired bool   `json:"grace_expired"`
	}
	said := func(t *testing.T, where string, e ext) {
		t.Helper()
		if !e.GraceExpired || !strings.Contains(e.Fallback, "stored answer is the final answer") {
			t.Errorf("%s: massgen = %+v, want the fallback and grace_expired", where, e)
		}
	}
	t.Run("completion", func(t *testing.T) {
		resp, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/hang", "q"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].Message.Content == "" {
			t.Error("no answer")
		}
		var v struct{ Massgen ext }
		if err := json.Unmarshal([]byte(resp.RawJSON()), &v); err != nil {
			t.Fatal(err)
		}
		said(t, "completion", v.Massgen)
	})
	t.Run("stream", func(t *testing.T) {
		datas := rawSSE(t, f, `{"model":"massgen/hang","stream":true,"messages":[{"role":"user","content":"q"}]}`)
		var reasoning strings.Builder
		var last struct{ Massgen *ext }
		for _, d := range datas[:len(datas)-1] {
			var c struct {
				Choices []struct {
					Delta struct {
						ReasoningContent string `json:"reasoning_content"`
					} `json:"delta"`
				} `json:"choices"`
				Massgen *ext `json:"massgen"`
			}
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			for _, ch := range c.Choices {
				reasoning.WriteString(ch.Delta.ReasoningContent)
			}
			if c.Massgen != nil {
				last.Massgen = c.Massgen
			}
		}
		if last.Massgen == nil {
			t.Fatal("no chunk carries the massgen object")
		}
		said(t, "last chunk", *last.Massgen)
		if !strings.Contains(reasoning.String(), "[massgen] final answer by ") || !strings.Contains(reasoning.String(), "presentation grace") {
			t.Errorf("the progress notes do not say the stored answer is final:\n%s", reasoning.String())
		}
	})
}
