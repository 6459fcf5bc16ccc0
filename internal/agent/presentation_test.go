package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

func TestPresentationRunsOwnToolsThenAnswers(t *testing.T) {
	own, err := tool.NewSet(tooltest.Add())
	if err != nil {
		t.Fatal(err)
	}
	m := script(
		reply{calls: []llm.ToolCall{{ID: "c1", Name: "add", Arguments: `{"a":2,"b":3}`}, {ID: "c2", Name: "nope", Arguments: `{}`}}},
		reply{text: " The sum is 5. "},
	)
	var seen []string
	p := &presentation{Model: m, Request: llm.Request{Model: "fake"}, System: "SYS", User: "USER", Tools: own,
		Client: []llm.ToolDef{{Name: "client_tool"}}, Emit: &recordingEmitter{},
		OnTool: func(c llm.ToolCall, r tool.Result, _ time.Duration) { seen = append(seen, c.Name+"="+r.Content) }}
	text, calls, _, err := p.Run(t.Context())
	if err != nil || text != "The sum is 5." || len(calls) != 0 {
		t.Fatalf("text %q calls %v err %v", text, calls, err)
	}
	if strings.Join(seen, ",") != "add=5" {
		t.Errorf("OnTool heard %v", seen)
	}
	reqs := m.requests()
	if got := toolNames(reqs[0]); strings.Join(got, ",") != "add,client_tool" {
		t.Errorf("offered %v", got)
	}
	msgs := reqs[1].Messages
	if len(msgs) != 5 || msgs[3].Content != "5" || !strings.Contains(msgs[4].Content, `tool "nope" is not available`) {
		t.Errorf("second request's messages: %+v", msgs)
	}
}

func TestPresentationReturnsClientCalls(t *testing.T) {
	own, _ := tool.NewSet(tooltest.Add())
	m := script(reply{text: "calling", calls: []llm.ToolCall{{ID: "c1", Name: "client_tool", Arguments: `{}`}}})
	p := &presentation{Model: m, Tools: own, Client: []llm.ToolDef{{Name: "client_tool"}}, Emit: &recordingEmitter{}}
	_, calls, _, err := p.Run(t.Context())
	if err != nil || len(calls) != 1 || calls[0].Name != "client_tool" {
		t.Fatalf("calls %v err %v", calls, err)
	}
}

func TestPresentationToolStepLimit(t *testing.T) {
	own, _ := tool.NewSet(tooltest.Add())
	call := reply{calls: []llm.ToolCall{{ID: "c", Name: "add", Arguments: `{"a":1,"b":1}`}}}
	m := script(call, call, call)
	p := &presentation{Model: m, Tools: own, Emit: &recordingEmitter{}, MaxToolSteps: 2}
	if _, _, _, err := p.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "tool step limit") {
		t.Fatalf("err %v", err)
	}
}
