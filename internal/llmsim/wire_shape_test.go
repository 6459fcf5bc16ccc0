package llmsim

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

const recordings = "../../../shared/reference/provider-recordings/"

// recordedBodies returns the response bodies of recorded interactions, or
// skips the test when the recordings are not there.
func recordedBodies(t *testing.T, dir string, names ...string) []string {
	t.Helper()
	if _, err := os.Stat(recordings + dir); err != nil {
		t.Skipf("recordings not available (%v): wire shape not compared", err)
	}
	var out []string
	for _, name := range names {
		src, err := os.ReadFile(recordings + dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var cassette struct {
			Interactions []struct {
				Response struct {
					Body string `yaml:"body"`
				} `yaml:"response"`
			} `yaml:"interactions"`
		}
		if err := yaml.Unmarshal(src, &cassette); err != nil {
			t.Fatal(err)
		}
		for _, in := range cassette.Interactions {
			out = append(out, in.Response.Body)
		}
	}
	return out
}

// payloads returns the JSON documents of a body: the data of each SSE event
// (any framing), or the body itself.
func payloads(body string) []string {
	if !strings.Contains(body, "data: ") {
		return []string{strings.TrimSpace(body)}
	}
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			out = append(out, strings.TrimSpace(d))
		}
	}
	return out
}

// opaque members hold the caller's data (tool arguments and schemas, echoed
// tools): only their kind is compared.
var opaque = map[string]bool{"input": true, "args": true, "arguments": true, "tools": true, "parameters": true,
	"input_schema": true, "metadata": true}

// merge unites the shapes of two documents: the members of both objects,
// the elements of both arrays as one element.
func merge(a, b any) any {
	switch av := a.(type) {
	case nil:
		return b
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return a
		}
		out := maps.Clone(av)
		for k, v := range bv {
			out[k] = merge(out[k], v)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return a
		}
		var u any
		for _, e := range append(slices.Clone(av), bv...) {
			u = merge(u, e)
		}
		if u == nil {
			return []any{}
		}
		return []any{u}
	}
	return a
}

// fits tells where sim does not fit real: every member sim has must exist in
// real with the same kind of value (null fits anything), recursively; real
// may have more. "" means it fits.
func fits(sim, real any, path string) string {
	if sim == nil || real == nil {
		return ""
	}
	if fmt.Sprintf("%T", sim) != fmt.Sprintf("%T", real) {
		return fmt.Sprintf("%s: %T, real has %T", path, sim, real)
	}
	switch s := sim.(type) {
	case map[string]any:
		r := real.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(s)) {
			rv, ok := r[k]
			if !ok {
				return path + "." + k + ": not in real traffic"
			}
			if opaque[k] {
				if s[k] != nil && rv != nil && fmt.Sprintf("%T", s[k]) != fmt.Sprintf("%T", rv) {
					return fmt.Sprintf("%s.%s: %T, real has %T", path, k, s[k], rv)
				}
				continue
			}
			if msg := fits(s[k], rv, path+"."+k); msg != "" {
				return msg
			}
		}
	case []any:
		r := real.([]any)
		for i, se := range s {
			if len(r) == 0 {
				return fmt.Sprintf("%s[%d]: real array is always empty", path, i)
			}
			if msg := fits(se, r[0], fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// checkShapes fails for every simulated document that does not fit the
// union of the real ones with the same "type" member (Gemini's chunks have
// none: they are all one kind).
func checkShapes(t *testing.T, sim, real []string) {
	t.Helper()
	byType := map[string]any{}
	for _, d := range real {
		var v map[string]any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("recorded %s: %v", d, err)
		}
		ty, _ := v["type"].(string)
		byType[ty] = merge(byType[ty], v)
	}
	for _, d := range sim {
		var v map[string]any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("simulated %s: %v", d, err)
		}
		ty, _ := v["type"].(string)
		union, ok := byType[ty]
		if !ok {
			t.Errorf("type %q not seen in real traffic: %s", ty, d)
			continue
		}
		if msg := fits(v, union, ty); msg != "" {
			t.Errorf("%s\n  in %s", msg, d)
		}
	}
}

// simBodies posts each body to path and returns the response bodies.
func simBodies(t *testing.T, f *fixture, path string, bodies ...string) []string {
	t.Helper()
	var out []string
	for _, b := range bodies {
		resp, err := f.hc.Post(strings.TrimSuffix(f.base, "/v1")+path, "application/json", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s %v", path, b, resp.StatusCode, raw, err)
		}
		out = append(out, payloads(string(raw))...)
	}
	return out
}

const shapeScenario = `models: {m: {steps: [{}, {}, {}, {}, {text: "Using both.", calls: [{name: add, arguments: '{"a": 2, "b": 3}'}, {name: multiply, arguments: '{"a":2,"b":3}'}]}, {calls: [{name: add, arguments: '{"a": 2, "b": 3}'}]}]}}`

func TestResponsesShapeMatchesRecordings(t *testing.T) {
	real := recordedBodies(t, "TestOpenAIResponsesCommon/openai-gpt-4o", "simple_streaming.yaml", "tool_streaming.yaml",
		"multi_tool_streaming.yaml", "simple.yaml", "tool.yaml", "multi_tool.yaml")
	var rp []string
	for _, b := range real {
		rp = append(rp, payloads(b)...)
	}
	f := start(t, scenario(t, shapeScenario))
	tools := `"tools":[{"type":"function","name":"new_answer","parameters":{"type":"object"},"strict":false}]`
	sim := simBodies(t, f, "/v1/responses",
		`{"model":"m","stream":true,"input":"hi"}`, `{"model":"m","input":"hi"}`,
		`{"model":"m","stream":true,"instructions":"sys","input":[{"role":"user","content":"task"}],`+tools+`}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"task"}]}],`+tools+`}`,
		`{"model":"m","stream":true,"input":"hi",`+tools+`}`, `{"model":"m","input":"hi",`+tools+`}`)
	checkShapes(t, sim, rp)
}

func TestAnthropicShapeMatchesRecordings(t *testing.T) {
	real := recordedBodies(t, "TestAnthropicCommon/claude-sonnet-4", "simple_streaming.yaml", "tool_streaming.yaml",
		"multi_tool_streaming.yaml", "simple.yaml", "tool.yaml", "multi_tool.yaml")
	var rp []string
	for _, b := range real {
		rp = append(rp, payloads(b)...)
	}
	f := start(t, scenario(t, shapeScenario))
	msgs := `"max_tokens":100,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":"task"}]`
	tools := `"tools":[{"name":"new_answer","input_schema":{"type":"object"}}]`
	sim := simBodies(t, f, "/v1/messages",
		`{"model":"m","stream":true,`+msgs+`}`, `{"model":"m",`+msgs+`}`,
		`{"model":"m","stream":true,`+msgs+`,`+tools+`}`, `{"model":"m",`+msgs+`,`+tools+`}`,
		`{"model":"m","stream":true,`+msgs+`,`+tools+`}`, `{"model":"m",`+msgs+`,`+tools+`}`)
	checkShapes(t, sim, rp)
}

func TestGeminiShapeMatchesRecordings(t *testing.T) {
	real := recordedBodies(t, "TestGoogleCommon/gemini-2.5-flash", "simple_streaming.yaml", "tool_streaming.yaml",
		"multi_tool_streaming.yaml", "simple.yaml", "tool.yaml", "multi_tool.yaml")
	var rp []string
	for _, b := range real {
		rp = append(rp, payloads(b)...)
	}
	f := start(t, scenario(t, strings.Replace(shapeScenario, "models: {", "models: {bad: {always: {fault: malformed_tool_json}}, ", 1)))
	req := `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task"}]}]`
	tools := `,"tools":[{"functionDeclarations":[{"name":"new_answer","parameters":{"type":"OBJECT"}}]}]`
	stream, whole := "/v1beta/models/m:streamGenerateContent?alt=sse", "/v1beta/models/m:generateContent"
	var sim []string
	for _, path := range []string{stream, whole, stream, whole, stream, whole} {
		sim = append(sim, simBodies(t, f, path, req+tools+"}")...)
	}
	for _, path := range []string{stream, whole} {
		sim = append(sim, simBodies(t, f, strings.Replace(path, "/m:", "/bad:", 1), req+tools+"}")...)
	}
	checkShapes(t, sim, rp)
	if last := sim[len(sim)-1]; !strings.Contains(last, `"finishReason":"MALFORMED_FUNCTION_CALL"`) || !strings.Contains(last, `"finishMessage":"Malformed function call: new_answer`) {
		t.Errorf("malformed: %s", last)
	}
}

func TestFitsCatchesInventedMembers(t *testing.T) {
	real := merge(map[string]any{"a": "x", "o": []any{map[string]any{"k": 1.0}}},
		map[string]any{"o": []any{map[string]any{"j": true}}, "n": nil})
	for doc, want := range map[string]string{
		`{"a":"y","o":[{"k":2},{"j":false}],"n":{"z":1}}`: "",
		`{"b":1}`:           ".b: not in real traffic",
		`{"a":1}`:           ".a: float64, real has string",
		`{"o":[{"k":"s"}]}`: ".o[0].k: string, real has float64",
		`{"o":[{"q":1}]}`:   ".o[0].q: not in real traffic",
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		if got := fits(v, real, ""); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}
