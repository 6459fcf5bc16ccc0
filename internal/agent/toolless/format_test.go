package toolless

import (
	"encoding/json"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

func TestParseReadsEachFormOfAnAction(t *testing.T) {
	voting := offer{vote: true, labels: []string{"agent1", "agent2", "agent10"}}
	first := offer{}
	for _, c := range []struct {
		name, text string
		o          offer
		want       string // tool name, "" for no action
		key, val   string // one argument to check
	}{
		{"json answer", `{"action": "new_answer", "content": "Paris"}`, first, coord.ToolNewAnswer, "content", "Paris"},
		{"json vote in a fence", "```json\n{\"action\":\"vote\",\"agent_id\":\"agent2\",\"reason\":\"right\"}\n```", voting, coord.ToolVote, "agent_id", "agent2"},
		{"answer line", "ANSWER: The capital is Paris.\nIt is on the Seine.", first, coord.ToolNewAnswer, "content", "The capital is Paris.\nIt is on the Seine."},
		{"bold answer line", "Sure.\n**Answer:** Paris", voting, coord.ToolNewAnswer, "content", "Paris"},
		{"vote with reason", "VOTE: agent1\nREASON: it is complete", voting, coord.ToolVote, "reason", "it is complete"},
		{"vote spaced and capitalised", "Vote: Agent 1 because it is right", voting, coord.ToolVote, "agent_id", "agent1"},
		{"longest label wins", "VOTE: `agent10`", voting, coord.ToolVote, "agent_id", "agent10"},
		{"unknown label kept for the coordinator", "VOTE: agent7", voting, coord.ToolVote, "agent_id", "agent7"},
		{"plain text with nothing to vote for is an answer", "Paris is the capital.", first, coord.ToolNewAnswer, "content", "Paris is the capital."},
		{"plain text with answers to vote for is no action", "Paris is the capital.", voting, "", "", ""},
		{"json of another shape is no action", `{"answer": "Paris"}`, voting, "", "", ""},
		{"empty", "  ", first, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, args, ok := parse(c.text, c.o)
			if c.want == "" {
				if ok {
					t.Fatalf("parse(%q) = %s %v, want no action", c.text, name, args)
				}
				return
			}
			if !ok || name != c.want {
				t.Fatalf("parse(%q) = %q ok=%v, want %s", c.text, name, ok, c.want)
			}
			if got, _ := args[c.key].(string); got != c.val {
				t.Errorf("parse(%q)[%s] = %q, want %q", c.text, c.key, got, c.val)
			}
		})
	}
}

// What the seam writes back for an action it made up reads as that action
// again: the model sees its earlier replies in the form it was asked for.
func TestRenderedActionsParseBack(t *testing.T) {
	o := offer{vote: true, labels: []string{"agent1", "agent2"}}
	for _, mode := range []Mode{JSONSchema, Text} {
		for _, c := range []llm.ToolCall{
			{Name: coord.ToolNewAnswer, Arguments: `{"content":"Paris, on the Seine"}`},
			{Name: coord.ToolVote, Arguments: `{"agent_id":"agent2","reason":"complete"}`},
		} {
			name, args, ok := parse(render(mode, c), o)
			var want map[string]any
			_ = json.Unmarshal([]byte(c.Arguments), &want)
			if !ok || name != c.Name {
				t.Fatalf("%s: %q parsed as %q", mode, render(mode, c), name)
			}
			for k, v := range want {
				if args[k] != v {
					t.Errorf("%s: %s[%s] = %v, want %v", mode, name, k, args[k], v)
				}
			}
		}
	}
}

func TestOfferAndSchemaFollowTheToolsOffered(t *testing.T) {
	if _, ok := offerOf([]llm.ToolDef{tool.Submit(), tool.Restart()}); ok {
		t.Fatal("a post-evaluation request read as a coordination request")
	}
	o, ok := offerOf([]llm.ToolDef{tool.NewAnswer()})
	if !ok || o.vote {
		t.Fatalf("new_answer alone: offer %+v ok=%v", o, ok)
	}
	s := o.schema()["json_schema"].(map[string]any)["schema"].(map[string]any)
	if _, choice := s["oneOf"]; choice || s["required"] == nil {
		t.Errorf("with nothing to vote for the schema is the answer object alone, got %v", s)
	}
	o, _ = offerOf([]llm.ToolDef{tool.NewAnswer(), tool.Vote([]string{"agent1", "agent2"})})
	if !o.vote || len(o.labels) != 2 || o.labels[1] != "agent2" {
		t.Fatalf("vote's labels not read: %+v", o)
	}
	s = o.schema()["json_schema"].(map[string]any)["schema"].(map[string]any)
	choices := s["oneOf"].([]any)
	vote := choices[0].(map[string]any)["properties"].(map[string]any)
	if ids := vote["agent_id"].(map[string]any)["enum"].([]string); len(ids) != 2 || ids[0] != "agent1" {
		t.Errorf("vote's agent_id enum = %v, want the offered labels", ids)
	}
}

func TestDefaultModeIsAutoForLocalServersOnly(t *testing.T) {
	for _, c := range []struct {
		typ, url string
		want     Mode
	}{
		{"lmstudio", "http://localhost:1234/v1", Auto},
		{"vllm", "http://gpu-box:8000/v1", Auto},
		{"sglang", "http://127.0.0.1:30000/v1", Auto},
		{"ollama", "http://localhost:11434/v1", Auto},
		{"chatcompletion", "http://127.0.0.1:8080/v1", Auto},
		{"chatcompletion", "http://192.168.1.20:8080/v1", Auto},
		{"chatcompletion", "https://api.example.com/v1", Native},
		{"groq", "https://api.groq.com/openai/v1", Native},
		{"sim", "http://127.0.0.1:4000/v1", Native},
	} {
		if got := DefaultMode(c.typ, c.url); got != c.want {
			t.Errorf("DefaultMode(%s, %s) = %s, want %s", c.typ, c.url, got, c.want)
		}
	}
	if _, err := ParseMode("grammar"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}
