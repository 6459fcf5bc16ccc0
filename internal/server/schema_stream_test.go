package server

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// presenting is a run whose winner presents text in two deltas.
func presenting(text string) []event.Record {
	half := len(text) / 2
	return []event.Record{
		{Type: event.TypeRunStarted, Agents: []string{"a"}},
		{Type: event.TypeFinalStarted, Agent: "a"},
		{Type: event.TypeFinalDelta, Agent: "a", Text: text[:half]},
		{Type: event.TypeFinalDelta, Agent: "a", Text: text[half:]},
		{Type: event.TypeFinalAnswer, Agent: "a", Text: text, Reason: "presentation"},
		{Type: event.TypeRunFinished, Status: "completed", Agent: "a"},
	}
}

const formatBody = `{"model":"massgen","stream":true,"messages":[{"role":"user","content":"q"}],
	"response_format":{"type":"json_schema","json_schema":{"name":"c","schema":{"type":"object","required":["city"]}}}}`

// With a format, a stream holds the answer back until it has been
// checked: a conforming one goes out once, without its code fence...
func TestAStreamedAnswerInAFormatGoesOutOnceChecked(t *testing.T) {
	fenced := "```json\n{\"city\":\"Paris\"}\n```"
	hs, _ := fake(t, presenting(fenced), &RunResult{Status: coord.RunCompleted, Final: fenced, Winner: "a"}, nil)
	datas := sse(t, hs.URL, formatBody)
	if got := content(t, datas); got != `{"city":"Paris"}` {
		t.Errorf("content = %q", got)
	}

	// ...through the Responses API too: one message item, the JSON.
	names, events := responsesEventsOf(t, hs.URL, `{"model":"massgen","stream":true,"input":"q",
		"text":{"format":{"type":"json_schema","name":"c","schema":{"type":"object","required":["city"]}}}}`)
	var deltas strings.Builder
	for i, n := range names {
		if n == "response.output_text.delta" {
			deltas.WriteString(events[i]["delta"].(string))
		}
	}
	if deltas.String() != `{"city":"Paris"}` {
		t.Errorf("output_text deltas = %q", deltas.String())
	}
}

// ...and one that does not conform never reaches the client's content.
func TestAStreamedAnswerThatDoesNotConformIsNeverSent(t *testing.T) {
	bad := `{"town":"Paris"}`
	hs, _ := fake(t, presenting(bad), &RunResult{Status: coord.RunCompleted, Final: bad, Winner: "a"}, nil)
	datas := sse(t, hs.URL, formatBody)
	if got := content(t, datas); got != "" {
		t.Errorf("content = %q, want none", got)
	}
	if last := datas[len(datas)-2]; !strings.Contains(last, "final_answer_schema_mismatch") || !strings.Contains(last, "city") {
		t.Errorf("the stream ends with %s", last)
	}
}
