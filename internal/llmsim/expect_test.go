package llmsim

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// toolDocExample is the tool scripting example of the package
// documentation.
const toolDocExample = `
models:
  tool-model:
    steps:
      - calls:                              # the model calls two tools at once
          - {name: add, arguments: '{"a":2,"b":3}'}
          - {name: lookup, arguments: '{"country":"France"}'}
      - expect_results:                     # what the client must send back
          - {name: add, contains: "5"}
          - {name: lookup, contains: "Paris"}
        answer: "5, and Paris."             # then the step's action
`

func TestParseToolDocExample(t *testing.T) {
	sc, err := ParseScenario([]byte(toolDocExample))
	if err != nil {
		t.Fatal(err)
	}
	steps := sc.Models["tool-model"].Steps
	if len(steps) != 2 || len(steps[0].Calls) != 2 || steps[1].Answer != "5, and Paris." ||
		steps[1].ExpectResults[1] != (Expect{Name: "lookup", Contains: "Paris"}) {
		t.Errorf("steps = %+v", steps)
	}
	_, err = ParseScenario([]byte("models:\n  m:\n    steps:\n      - expect_results:\n          - {}\n"))
	if err == nil || !strings.Contains(err.Error(), "models.m.steps[0].expect_results[0]: an expectation needs a name, contains or both") {
		t.Errorf("empty expectation: err = %v", err)
	}
}

func TestCheckResults(t *testing.T) {
	got := []toolResult{{"add", "5"}, {"add", "7"}, {"lookup", `{"content":"The capital is \"Paris\"."}`}}
	tests := []struct {
		name    string
		want    []Expect
		problem string // "" = all found
	}{
		{"all found, in any order", []Expect{{Name: "add", Contains: "7"}, {Name: "add", Contains: "5"}}, ""},
		{"a JSON object's string values are searched unescaped", []Expect{{Name: "lookup", Contains: `"Paris"`}}, ""},
		{"any name", []Expect{{Contains: "capital"}}, ""},
		{"just a result of that name", []Expect{{Name: "lookup"}}, ""},
		{"each result counts once", []Expect{{Name: "add", Contains: "5"}, {Name: "add", Contains: "5"}},
			`expected a tool result of add containing "5"; the results were add: "5", add: "7", lookup: `},
		{"wrong name", []Expect{{Name: "mul", Contains: "5"}}, `expected a tool result of mul containing "5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := checkResults(tt.want, got)
			if tt.problem == "" && p != "" || tt.problem != "" && !strings.HasPrefix(p, tt.problem) {
				t.Errorf("problem = %q, want %q", p, tt.problem)
			}
		})
	}
	if p := checkResults([]Expect{{Name: "add"}}, nil); !strings.Contains(p, "no tool results after the last assistant message") {
		t.Errorf("no results: %q", p)
	}
}

// TestEachWireNamesItsToolResults posts a conversation in each wire's
// format whose last assistant turn called add and lookup, with their
// results after it (and older results before it, which must not count).
func TestEachWireNamesItsToolResults(t *testing.T) {
	const sc = `
models:
  "*":
    steps:
      - expect_results: [{name: add, contains: "5"}, {name: lookup, contains: "Paris"}]
        text: ok
      - expect_results: [{name: add, contains: "99"}]
        text: never
`
	bodies := map[string]struct{ path, body string }{
		WireChat: {"/v1/chat/completions", `{"model":"m","messages":[
			{"role":"user","content":"task"},
			{"role":"assistant","tool_calls":[{"id":"old","type":"function","function":{"name":"add","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"old","content":"99"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"c1","type":"function","function":{"name":"add","arguments":"{}"}},
				{"id":"c2","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"5"},
			{"role":"tool","tool_call_id":"c2","content":"Paris"}]}`},
		WireResponses: {"/v1/responses", `{"model":"m","input":[
			{"role":"user","content":"task"},
			{"type":"function_call","call_id":"old","name":"add","arguments":"{}"},
			{"type":"function_call_output","call_id":"old","output":"99"},
			{"type":"function_call","call_id":"c1","name":"add","arguments":"{}"},
			{"type":"function_call","call_id":"c2","name":"lookup","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"5"},
			{"type":"function_call_output","call_id":"c2","output":"Paris"}]}`},
		WireAnthropic: {"/v1/messages", `{"model":"m","max_tokens":100,"messages":[
			{"role":"user","content":"task"},
			{"role":"assistant","content":[{"type":"tool_use","id":"old","name":"add","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"old","content":"99"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"add","input":{}},{"type":"tool_use","id":"c2","name":"lookup","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"5"},
				{"type":"tool_result","tool_use_id":"c2","is_error":false,"content":[{"type":"text","text":"Paris"}]},
				{"type":"text","text":"UPDATE: new answers"}]}]}`},
		WireGemini: {"/v1beta/models/m:generateContent", `{"contents":[
			{"role":"user","parts":[{"text":"task"}]},
			{"role":"model","parts":[{"functionCall":{"name":"add","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"add","response":{"content":"99"}}}]},
			{"role":"model","parts":[{"functionCall":{"name":"add","args":{}}},{"functionCall":{"name":"lookup","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"add","response":{"content":"5"}}},
				{"functionResponse":{"name":"lookup","response":{"content":"Paris"}}}]}]}`},
	}
	for wire, b := range bodies {
		t.Run(wire, func(t *testing.T) {
			f := start(t, scenario(t, sc))
			post := func() (int, string) {
				req, _ := http.NewRequestWithContext(testCtx(t), "POST", strings.TrimSuffix(f.base, "/v1")+b.path, strings.NewReader(b.body))
				resp, err := f.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body)
			}
			if status, body := post(); status != 200 {
				t.Fatalf("first request: %d %s", status, body)
			}
			// The second step wants 99, which only an older turn's result has.
			status, body := post()
			if status != 400 || !strings.Contains(body, `llmsim: expected a tool result of add containing \"99\"`) {
				t.Errorf("second request: %d %s, want a 400 naming the expectation", status, body)
			}
			recs := f.sim.Requests()
			if len(recs) != 2 || recs[0].Problem != "" || recs[1].Outcome != OutcomeRejected || recs[1].Problem == "" {
				t.Errorf("records = %+v", recs)
			}
		})
	}
}
