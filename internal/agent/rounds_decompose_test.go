package agent

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// In decomposition mode the hard limit's refusal of an agent's own tool
// names stop, the action that ends its work there, not vote.
func TestTheHardLimitNamesStopInDecompositionMode(t *testing.T) {
	inbox := NewInbox()
	m := script(
		reply{text: "Working on my part…", during: func() {
			inbox.Post(WrapUp{Hard: true, Message: "HARD ROUND TIMEOUT: only stop or new_answer."})
		}},
		reply{calls: []llm.ToolCall{call("t1", "add", `{"a":1,"b":2}`)}},
		reply{calls: []llm.ToolCall{call("c1", "new_answer", `{"content":"My part, as it stands."}`)}},
	)
	turn := newTurn(m, &judge{}, nil, 0)
	turn.Tools, turn.Updates, turn.Decomposition = tooltest.Set(), inbox, true
	if res := turn.Run(t.Context()); res.Err != nil || res.Action.Content != "My part, as it stands." {
		t.Fatalf("result %+v, want the answer accepted", res)
	}
	reqs := m.requests()
	last := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1]
	if !strings.Contains(last.Content, `tool "add" is blocked; only stop or new_answer are allowed now`) {
		t.Errorf("the blocked call's result: %q", last.Content)
	}
}
