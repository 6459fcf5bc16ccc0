package coord

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAction(t *testing.T) {
	vote := func(args string) Call { return Call{ID: "1", Name: ToolVote, Arguments: args} }
	answer := func(args string) Call { return Call{ID: "2", Name: ToolNewAnswer, Arguments: args} }
	tests := []struct {
		name   string
		calls  []Call
		text   string
		want   Action
		reason string // substring of the rejection; "" means accepted
		none   bool
	}{
		{name: "vote is parsed", calls: []Call{vote(`{"agent_id":"agent2","reason":"best"}`)}, want: Action{Kind: ActVote, Label: "agent2", Reason: "best"}},
		{name: "new_answer is parsed", calls: []Call{answer(`{"content":"42"}`)}, want: Action{Kind: ActNewAnswer, Content: "42"}},
		{name: "new_answer without content takes the response text", calls: []Call{answer(`{}`)}, text: "from text", want: Action{Kind: ActNewAnswer, Content: "from text"}},
		{name: "no tool call gets the enforcement message", reason: "did not call a workflow tool", none: true},
		{name: "several votes are rejected", calls: []Call{vote(`{"agent_id":"agent1"}`), vote(`{"agent_id":"agent2"}`)}, reason: "Multiple votes"},
		{name: "vote plus answer is rejected", calls: []Call{answer(`{"content":"x"}`), vote(`{"agent_id":"agent1"}`)}, reason: "both vote and new_answer"},
		{name: "several answers are rejected", calls: []Call{answer(`{"content":"x"}`), answer(`{"content":"y"}`)}, reason: "Multiple new_answer"},
		{name: "malformed JSON arguments are rejected", calls: []Call{answer(`{"content": "unterminated`)}, reason: "not valid JSON"},
		{name: "an unknown tool is refused by name", calls: []Call{{Name: "web_search", Arguments: `{}`}}, reason: `"web_search" is not available`},
		{name: "other tools beside one workflow call are ignored", calls: []Call{{Name: "mcp__fs__read"}, vote(`{"agent_id":"agent1","reason":"r"}`)}, want: Action{Kind: ActVote, Label: "agent1", Reason: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, none, ok := ParseAction(tt.calls, tt.text)
			if tt.reason == "" {
				if !ok {
					t.Fatalf("rejected: %s", reason)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("action (-want +got):\n%s", diff)
				}
				return
			}
			if ok || !strings.Contains(reason, tt.reason) || none != tt.none {
				t.Errorf("got ok=%v none=%v reason=%q; want rejection containing %q, none=%v", ok, none, reason, tt.reason, tt.none)
			}
		})
	}
}

func TestJaccardIgnoresCaseAndPunctuation(t *testing.T) {
	if j := jaccard("Paris is the capital.", "paris IS the Capital"); j != 1 {
		t.Errorf("jaccard = %v, want 1", j)
	}
	if j := jaccard("a b c d", "a b x y"); j != 2.0/6 {
		t.Errorf("jaccard = %v, want 1/3", j)
	}
}
