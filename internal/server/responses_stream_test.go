package server

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
)

// responsesEvents posts a streaming Responses request and returns its
// events: the `event:` name and the decoded data of each.
func responsesEvents(t *testing.T, url string) (names []string, datas []map[string]any) {
	t.Helper()
	return responsesEventsOf(t, url, `{"model":"massgen","stream":true,"input":"q"}`)
}

// responsesEventsOf posts body and returns the event names and data.
func responsesEventsOf(t *testing.T, url, body string) (names []string, datas []map[string]any) {
	t.Helper()
	resp, err := hc.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("bad event data %s: %v", d, err)
			}
			datas = append(datas, m)
		}
	}
	if len(names) != len(datas) {
		t.Fatalf("%d event names for %d data lines", len(names), len(datas))
	}
	return names, datas
}

func TestResponsesStreamReconcilesDeltasWithTheFinalAnswer(t *testing.T) {
	ev := func(typ event.Type, text string) event.Record { return event.Record{Type: typ, Agent: "a", Text: text} }
	for _, tc := range []struct {
		name     string
		events   []event.Record
		final    string
		messages []string // the text of each message item, in order
	}{
		{"dropped deltas are sent at the end", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Hel"),
			ev(event.TypeFinalAnswer, "Hello world")}, "Hello world", []string{"Hello world"}},
		{"a failed presentation is followed by the stored answer", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Partial"),
			{Type: event.TypeFinalAnswer, Agent: "a", Text: "Stored answer.", Reason: "the presentation failed"}}, "Stored answer.",
			[]string{"Partial", "Stored answer."}},
		{"an orchestration restart presents again", []event.Record{ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "A"),
			ev(event.TypeFinalAnswer, "A"), ev(event.TypeRunRestarted, ""), ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "B"),
			ev(event.TypeFinalAnswer, "B")}, "B", []string{"A", "B"}},
		{"no events at all: the result's final answer", nil, "Only the result.", []string{"Only the result."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, _ := fake(t, tc.events, &RunResult{Status: "completed", Final: tc.final, Winner: "a"}, nil)
			names, datas := responsesEvents(t, hs.URL)
			texts := map[string]*strings.Builder{}
			var order []string
			for i, d := range datas {
				if d["type"] != names[i] || d["sequence_number"] != float64(i) {
					t.Fatalf("event %d: name %s, data type %v, sequence_number %v", i, names[i], d["type"], d["sequence_number"])
				}
				if names[i] == "response.output_text.delta" {
					id := d["item_id"].(string)
					if texts[id] == nil {
						texts[id] = &strings.Builder{}
						order = append(order, id)
					}
					texts[id].WriteString(d["delta"].(string))
				}
			}
			var got []string
			for _, id := range order {
				got = append(got, texts[id].String())
			}
			if strings.Join(got, "|") != strings.Join(tc.messages, "|") {
				t.Errorf("message items %q, want %q", got, tc.messages)
			}
			// response.completed lists the same messages.
			last := datas[len(datas)-1]
			if names[len(names)-1] != "response.completed" {
				t.Fatalf("last event %s", names[len(names)-1])
			}
			var done []string
			for _, it := range last["response"].(map[string]any)["output"].([]any) {
				item := it.(map[string]any)
				if item["type"] == "message" {
					done = append(done, item["content"].([]any)[0].(map[string]any)["text"].(string))
				}
			}
			if strings.Join(done, "|") != strings.Join(tc.messages, "|") {
				t.Errorf("response.completed messages %q, want %q", done, tc.messages)
			}
		})
	}
}

// Items are numbered in order, and each is closed before the next opens.
func TestResponsesStreamItemsNest(t *testing.T) {
	ev := func(typ event.Type, text string) event.Record { return event.Record{Type: typ, Agent: "a", Text: text} }
	hs, _ := fake(t, []event.Record{{Type: event.TypeRunStarted, Agents: []string{"a"}}, {Type: event.TypeAnswerAccepted, Agent: "a", Label: "agent1.1"},
		ev(event.TypeFinalStarted, ""), ev(event.TypeFinalDelta, "Hi"), ev(event.TypeFinalAnswer, "Hi"), {Type: event.TypeRunFinished, Status: "completed"}},
		&RunResult{Status: "completed", Final: "Hi", Winner: "a"}, nil)
	names, datas := responsesEvents(t, hs.URL)
	open, next := -1, 0
	for i, n := range names {
		switch n {
		case "response.output_item.added":
			idx := int(datas[i]["output_index"].(float64))
			if open != -1 || idx != next {
				t.Fatalf("item %d opened while item %d is open (next index %d)", idx, open, next)
			}
			open, next = idx, next+1
		case "response.output_item.done":
			if idx := int(datas[i]["output_index"].(float64)); idx != open {
				t.Fatalf("item %d closed while item %d is open", idx, open)
			}
			open = -1
		}
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}

// A final answer that is not presented (a single agent's) comes with a
// note; the note joins the progress before the message, which stays last.
func TestResponsesStreamKeepsTheAnswerLast(t *testing.T) {
	hs, _ := fake(t, []event.Record{{Type: event.TypeRunStarted, Agents: []string{"a"}}, {Type: event.TypeAnswerAccepted, Agent: "a", Label: "agent1.1"},
		{Type: event.TypeWinnerSelected, Agent: "a"},
		{Type: event.TypeFinalAnswer, Agent: "a", Text: "The answer.", Reason: "the winning answer is the final answer (a single agent has no other answers to combine)"},
		{Type: event.TypeRunFinished, Status: "completed"}},
		&RunResult{Status: "completed", Final: "The answer.", Winner: "a"}, nil)
	names, datas := responsesEvents(t, hs.URL)
	var kinds []string
	for _, it := range datas[len(datas)-1]["response"].(map[string]any)["output"].([]any) {
		kinds = append(kinds, it.(map[string]any)["type"].(string))
	}
	if names[len(names)-1] != "response.completed" || strings.Join(kinds, ",") != "reasoning,message" {
		t.Errorf("output items %v (last event %s), want reasoning then message", kinds, names[len(names)-1])
	}
	// response.completed says how the run ended, from its view.
	m, _ := datas[len(datas)-1]["response"].(map[string]any)["massgen"].(map[string]any)
	if m["winner"] != "a" || m["answers"] != 1.0 {
		t.Errorf("massgen object = %v, want winner a with 1 answer", m)
	}
}
