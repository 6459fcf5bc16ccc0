package llmsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatOnce posts one non-streamed Chat Completions request and returns the
// assistant's text and its tool call (name, arguments), if any.
func chatOnce(t *testing.T, f *fixture, body map[string]any) (text, call, args string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := f.hc.Post(f.base+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	m := out.Choices[0].Message
	if len(m.ToolCalls) > 0 {
		return m.Content, m.ToolCalls[0].Function.Name, m.ToolCalls[0].Function.Arguments
	}
	return m.Content, "", ""
}

func offerWorkflow(labels ...string) []map[string]any {
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "new_answer",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}}}}}
	if len(labels) > 0 {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": "vote",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"agent_id": map[string]any{"type": "string", "enum": labels}, "reason": map[string]any{"type": "string"}}}}})
	}
	return tools
}

func qualityScenario(t *testing.T, items string, models string) *Scenario {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte(items), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(path, []byte("quality:\n  seed: 3\n  dataset: items.jsonl\n  models:\n"+models), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A model at accuracy p answers the item's target on about p of the items
// (the draw the simulator exports as Right), and a wrong answer otherwise;
// at 1 always the target, at 0 never; its votes follow its belief.
func TestQualityModelAnswersTheTargetAtItsRate(t *testing.T) {
	var items strings.Builder
	const n = 400
	for i := range n {
		fmt.Fprintf(&items, `{"id":"q%d","question":"What is %d plus %d?","target":"%d"}`+"\n", i, i, i, 2*i)
	}
	sc := qualityScenario(t, items.String(), "    sim-p: {accuracy: 0.7}\n    sim-one: {accuracy: 1}\n    sim-zero: {accuracy: 0, items: {q5: 1.0}}\n")
	f := start(t, sc)
	ask := func(model string, i int) string {
		task := fmt.Sprintf("<ORIGINAL MESSAGE> What is %d plus %d? <END OF ORIGINAL MESSAGE>\n<CURRENT ANSWERS from the agents>\n(no answers available yet)\n<END OF CURRENT ANSWERS>", i, i)
		_, call, args := chatOnce(t, f, map[string]any{"model": model, "messages": []map[string]any{{"role": "user", "content": task}}, "tools": offerWorkflow()})
		if call != "new_answer" {
			t.Fatalf("%s called %q, want new_answer", model, call)
		}
		var a struct{ Content string }
		json.Unmarshal([]byte(args), &a)
		return a.Content
	}
	right := 0
	for i := range n {
		got := ask("sim-p", i)
		want := sc.Quality.Right("sim-p", fmt.Sprintf("q%d", i), 0)
		if (got == qualityAnswer("sim-p", fmt.Sprint(2*i))) != want {
			t.Fatalf("item q%d: answered %q, Right says %v", i, got, want)
		}
		if want {
			right++
		}
	}
	// 400 draws at 0.7: the standard deviation is 9 items; 5 of them is
	// a 1-in-a-million miss for a correct draw.
	if right < 280-46 || right > 280+46 {
		t.Errorf("sim-p was right on %d of %d items, want about 280", right, n)
	}
	for i := range 20 {
		if got := ask("sim-one", i); got != qualityAnswer("sim-one", fmt.Sprint(2*i)) {
			t.Errorf("sim-one on q%d: %q", i, got)
		}
		got := ask("sim-zero", i)
		if (got == qualityAnswer("sim-zero", fmt.Sprint(2*i))) != (i == 5) {
			t.Errorf("sim-zero on q%d (right only on q5): %q", i, got)
		}
	}

	// Votes follow the belief: sim-one votes for the label holding the
	// target, and answers the target when no label holds it.
	task := "<ORIGINAL MESSAGE> What is 3 plus 3? <END OF ORIGINAL MESSAGE>\n<CURRENT ANSWERS from the agents>\n<agent1> x\nANSWER: 7 <end of agent1>\n<agent2> y\nANSWER: 6 <end of agent2>\n<END OF CURRENT ANSWERS>"
	_, call, args := chatOnce(t, f, map[string]any{"model": "sim-one", "messages": []map[string]any{{"role": "user", "content": task}}, "tools": offerWorkflow("agent1", "agent2")})
	if call != "vote" || !strings.Contains(args, `"agent2"`) {
		t.Errorf("sim-one voted %s %s, want a vote for agent2", call, args)
	}
	task = strings.Replace(task, "ANSWER: 6 <end", "ANSWER: 5 <end", 1)
	_, call, args = chatOnce(t, f, map[string]any{"model": "sim-one", "messages": []map[string]any{{"role": "user", "content": task}}, "tools": offerWorkflow("agent1", "agent2")})
	if call != "new_answer" || !strings.Contains(args, `ANSWER: 6`) {
		t.Errorf("with no answer saying 6, sim-one did %s %s, want new_answer 6", call, args)
	}
	// A request about no item gets the default policy.
	_, call, args = chatOnce(t, f, map[string]any{"model": "sim-one", "messages": []map[string]any{{"role": "user", "content": "Tell me a story"}}, "tools": offerWorkflow()})
	if call != "new_answer" || !strings.Contains(args, "[sim model sim-one]") {
		t.Errorf("off-dataset request: %s %s, want the default policy's answer", call, args)
	}
}

// The seed parameter of a request draws afresh: the same model, item and
// seed always agree, and different seeds give independent beliefs.
func TestQualityDrawsPerRequestSeed(t *testing.T) {
	q := &Quality{Seed: 1, Models: map[string]ModelQuality{"m": {Accuracy: 0.5}}}
	same, differ := 0, 0
	for i := range 200 {
		id := fmt.Sprint(i)
		if q.Right("m", id, 1) != q.Right("m", id, 1) {
			t.Fatal("one draw gave two answers")
		}
		if q.Right("m", id, 1) == q.Right("m", id, 2) {
			same++
		} else {
			differ++
		}
	}
	if differ < 60 || same < 60 { // independent halves: about 100 each
		t.Errorf("seeds 1 and 2 agreed on %d items and differed on %d; want about half each", same, differ)
	}
}

// Multiple-choice items get another letter when wrong; numbers, a nearby
// number; rates out of [0, 1] and a relative dataset without a file are
// refused.
func TestQualityWrongAnswersAndValidation(t *testing.T) {
	sc := qualityScenario(t, `{"id":"c","question":"Pick","choices":["x","y","z"],"target":"y"}`+"\n"+`{"id":"n","question":"Count","target":"10"}`+"\n",
		"    m: {accuracy: 0}\n")
	mq := sc.qualityFor("m")
	for _, seed := range []int64{1, 2, 3, 4, 5, 6} {
		if b := mq.belief("m", sc.Quality.items[0], seed); b != "A" && b != "C" {
			t.Errorf("wrong choice %q, want A or C", b)
		}
		if b := mq.belief("m", sc.Quality.items[1], seed); b == "10" || !strings.ContainsAny(b, "0123456789") {
			t.Errorf("wrong number %q", b)
		}
	}
	if _, err := ParseScenario([]byte("quality:\n  dataset: items.jsonl\n  models: {m: {accuracy: 0.5}}\n")); err == nil || !strings.Contains(err.Error(), "relative") {
		t.Errorf("relative dataset in a scenario without a file: %v", err)
	}
	if _, err := ParseScenario([]byte("quality:\n  dataset: /x.jsonl\n  models: {m: {accuracy: 1.5}}\n")); err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
		t.Errorf("accuracy 1.5: %v", err)
	}
}
