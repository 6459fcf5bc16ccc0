package tool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func echo(name string) Tool {
	return Func(llm.ToolDef{Name: name}, func(_ context.Context, args json.RawMessage) (string, error) {
		return string(args), nil
	})
}

func TestInvokeTurnsEveryFailureIntoAnErrorResult(t *testing.T) {
	panics := Func(llm.ToolDef{Name: "boom"}, func(context.Context, json.RawMessage) (string, error) {
		var m map[string]int
		m["x"] = 1 // nil map: a runtime panic, as a buggy tool would have
		return "", nil
	})
	fails := Func(llm.ToolDef{Name: "fails"}, func(context.Context, json.RawMessage) (string, error) {
		return "", errors.New("disk full")
	})
	tests := []struct {
		name    string
		tool    Tool
		args    string
		want    Result
		contain string
	}{
		{"success", echo("echo"), `{"a":1}`, Result{Content: `{"a":1}`}, ""},
		{"empty arguments are an empty object", echo("echo"), "  ", Result{Content: `{}`}, ""},
		{"an error", fails, `{}`, Result{Content: "disk full", IsError: true}, ""},
		{"a panic", panics, `{}`, Result{IsError: true}, "tool boom failed: panic: assignment to entry in nil map"},
		{"arguments that are not JSON", echo("echo"), `{"a":`, Result{IsError: true}, "the arguments of echo are not a JSON object"},
		{"arguments that are not an object", echo("echo"), `[1]`, Result{IsError: true}, "not a JSON object"},
		{"null arguments", echo("echo"), `null`, Result{IsError: true}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Invoke(t.Context(), tt.tool, tt.args, 0)
			if tt.contain != "" {
				if !got.IsError || !strings.Contains(got.Content, tt.contain) {
					t.Fatalf("Invoke = %+v, want an error result containing %q", got, tt.contain)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Invoke = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInvokeTimeoutEndsTheCallsContextAndSaysSo(t *testing.T) {
	waits := Func(llm.ToolDef{Name: "slow"}, func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done() // returns only when the deadline has passed
		return "partial", nil
	})
	got := Invoke(t.Context(), waits, `{}`, time.Millisecond)
	if !got.IsError || !strings.Contains(got.Content, "tool slow timed out after 1ms") {
		t.Errorf("Invoke = %+v, want a timeout error result", got)
	}
	honest := Func(llm.ToolDef{Name: "slow"}, func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	got = Invoke(t.Context(), honest, `{}`, time.Millisecond)
	if !got.IsError || !strings.Contains(got.Content, "timed out after 1ms: context deadline exceeded") {
		t.Errorf("Invoke = %+v, want the timeout named before the tool's own error", got)
	}
}

func TestSetRefusesCollisionsAndKeepsOrder(t *testing.T) {
	if _, err := NewSet(echo("a"), echo("b"), echo("a")); err == nil || !strings.Contains(err.Error(), `two tools are named "a"`) {
		t.Errorf("NewSet with a repeated name: err = %v", err)
	}
	if _, err := NewSet(echo("")); err == nil {
		t.Error("NewSet accepted a tool without a name")
	}
	s, err := NewSet(echo("a"), echo("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.With(echo("b")); err == nil {
		t.Error("With accepted a name the set already has")
	}
	w, err := s.With(NewAnswerTool(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new_answer", "a", "b"}, w.Names()); diff != "" {
		t.Errorf("With names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, s.Names()); diff != "" {
		t.Errorf("With changed the original set (-want +got):\n%s", diff)
	}
	if got, ok := s.Lookup("b"); !ok || got.Def().Name != "b" {
		t.Errorf("Lookup(b) = %v, %v", got, ok)
	}
	if _, ok := s.Lookup("c"); ok {
		t.Error("Lookup found a tool that is not there")
	}
	if defs := w.Defs(); len(defs) != 3 || defs[0].Name != coord.ToolNewAnswer {
		t.Errorf("Defs = %+v", defs)
	}
	var empty *Set
	if empty.Len() != 0 || empty.Names() != nil || empty.Defs() != nil {
		t.Error("a nil set is not empty")
	}
	if _, ok := empty.Lookup("a"); ok {
		t.Error("a nil set found a tool")
	}
}

func TestWorkflowToolsAskTheJudge(t *testing.T) {
	var asked []coord.Action
	judge := func(v coord.Verdict) Judge {
		return func(a coord.Action) coord.Verdict { asked = append(asked, a); return v }
	}
	tests := []struct {
		name    string
		tool    Tool
		args    string
		want    Result
		wantAct *coord.Action
	}{
		{"accepted answer", NewAnswerTool(judge(coord.Verdict{Outcome: coord.Accepted, Label: "agent1.1"})), `{"content":"Paris."}`,
			Result{Content: "Answer recorded as agent1.1."}, &coord.Action{Kind: coord.ActNewAnswer, Content: "Paris."}},
		{"rejected vote", VoteTool([]string{"agent1"}, judge(coord.Verdict{Outcome: coord.Rejected, Message: "no such agent"})),
			`{"agent_id":"agent9","reason":"r"}`, Result{Content: "no such agent", IsError: true},
			&coord.Action{Kind: coord.ActVote, Label: "agent9", Reason: "r"}},
		{"stale vote", VoteTool([]string{"agent1"}, judge(coord.Verdict{Outcome: coord.Stale, Message: "answers changed"})),
			`{"agent_id":"agent1","reason":"r"}`, Result{Content: "answers changed"},
			&coord.Action{Kind: coord.ActVote, Label: "agent1", Reason: "r"}},
		{"broken arguments are not judged", NewAnswerTool(judge(coord.Verdict{})), `{"content":`, Result{IsError: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			got := Invoke(t.Context(), tt.tool, tt.args, 0)
			if tt.wantAct == nil {
				if len(asked) != 0 || !got.IsError {
					t.Errorf("judged %+v, result %+v; want no judgement and an error result", asked, got)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("result = %+v, want %+v", got, tt.want)
			}
			if len(asked) != 1 || asked[0] != *tt.wantAct {
				t.Errorf("judged %+v, want %+v", asked, *tt.wantAct)
			}
		})
	}
}
