package agent

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func TestPresentReturnsTrimmedTextAndOffersNoTools(t *testing.T) {
	m := script(reply{text: "\n  The capital of France is Paris.  \n\n", usage: llm.Usage{InputTokens: 40, OutputTokens: 9}})
	em := &recordingEmitter{}
	// A base request that carries tools must not leak them into the presentation.
	base := llm.Request{Model: "fake-1", Tools: []llm.ToolDef{{Name: "new_answer"}}, Params: map[string]any{"top_p": 0.9}}
	text, usage, err := present(t.Context(), m, base, "SYS", "USER", em)
	if err != nil {
		t.Fatal(err)
	}
	if text != "The capital of France is Paris." {
		t.Errorf("text = %q, want it trimmed", text)
	}
	if usage != (llm.Usage{InputTokens: 40, OutputTokens: 9}) {
		t.Errorf("usage = %+v", usage)
	}
	req := m.requests()[0]
	if len(req.Tools) != 0 {
		t.Errorf("presentation offered tools %v", toolNames(req))
	}
	want := []llm.Message{{Role: llm.RoleSystem, Content: "SYS"}, {Role: llm.RoleUser, Content: "USER"}}
	if diff := cmp.Diff(want, req.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if req.Model != "fake-1" || req.Params["top_p"] != 0.9 {
		t.Errorf("request lost model or params: %+v", req)
	}
	if len(base.Tools) != 1 {
		t.Error("Present changed the caller's base request")
	}
	if len(em.text) == 0 {
		t.Error("presentation text was not streamed to the emitter")
	}
}

func TestPresentReturnsTheModelError(t *testing.T) {
	provErr := &llm.Error{Provider: "fake", Status: 500, Message: "boom"}
	m := script(reply{text: "partial ", err: provErr})
	text, _, err := present(t.Context(), m, llm.Request{}, "SYS", "USER", nil)
	if !errors.Is(err, provErr) {
		t.Errorf("err = %v, want the provider error", err)
	}
	if text != "partial" {
		t.Errorf("text = %q, want the partial text so far, trimmed", text)
	}
}

func TestPostEvaluate(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		want  Evaluation
	}{
		{
			name: "restart_orchestration asks for a restart with reason and instructions",
			reply: reply{calls: []llm.ToolCall{call("c1", coord.ToolRestart, `{"reason":"misses the population","instructions":"add the population"}`)},
				usage: llm.Usage{InputTokens: 30, OutputTokens: 5}},
			want: Evaluation{Restart: true, Reason: "misses the population", Instructions: "add the population", Usage: llm.Usage{InputTokens: 30, OutputTokens: 5}},
		},
		{
			name:  "submit keeps the answer",
			reply: reply{calls: []llm.ToolCall{call("c1", coord.ToolSubmit, `{"confirmed":true}`)}, usage: llm.Usage{InputTokens: 30, OutputTokens: 2}},
			want:  Evaluation{Usage: llm.Usage{InputTokens: 30, OutputTokens: 2}},
		},
		{
			name:  "restart after submit in the same response still restarts",
			reply: reply{calls: []llm.ToolCall{call("c1", coord.ToolSubmit, `{"confirmed":true}`), call("c2", coord.ToolRestart, `{"reason":"r","instructions":"i"}`)}},
			want:  Evaluation{Restart: true, Reason: "r", Instructions: "i"},
		},
		{
			name:  "no call counts as submit",
			reply: reply{text: "Looks good to me."},
			want:  Evaluation{},
		},
		{
			name:  "a model error counts as submit",
			reply: reply{err: &llm.Error{Provider: "fake", Status: 503}},
			want:  Evaluation{},
		},
		{
			name:  "malformed restart arguments still restart, without details",
			reply: reply{calls: []llm.ToolCall{call("c1", coord.ToolRestart, `{"reason":`)}},
			want:  Evaluation{Restart: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := script(tt.reply)
			got := postEvaluate(t.Context(), m, llm.Request{Model: "fake-1"}, "SYS", "EVAL", nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			req := m.requests()[0]
			if diff := cmp.Diff([]string{coord.ToolSubmit, coord.ToolRestart}, toolNames(req)); diff != "" {
				t.Errorf("tools offered (-want +got):\n%s", diff)
			}
		})
	}
}
