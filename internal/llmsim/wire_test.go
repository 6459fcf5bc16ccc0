package llmsim

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wireCalls are the same request (system prompt, task, new_answer offered)
// in each wire format: path under the server root and body.
var wireCalls = []struct{ wire, path, stream, whole string }{
	{WireChat, "/v1/chat/completions",
		`{"model":"p","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"task"}],"tools":[{"type":"function","function":{"name":"new_answer"}}]}`,
		`{"model":"p","messages":[{"role":"system","content":"sys"},{"role":"user","content":"task"}],"tools":[{"type":"function","function":{"name":"new_answer"}}]}`},
	{WireResponses, "/v1/responses",
		`{"model":"p","stream":true,"instructions":"sys","input":"task","tools":[{"type":"function","name":"new_answer"}]}`,
		`{"model":"p","instructions":"sys","input":"task","tools":[{"type":"function","name":"new_answer"}]}`},
	{WireAnthropic, "/v1/messages",
		`{"model":"p","stream":true,"max_tokens":99,"system":"sys","messages":[{"role":"user","content":"task"}],"tools":[{"name":"new_answer","input_schema":{"type":"object"}}]}`,
		`{"model":"p","max_tokens":99,"system":"sys","messages":[{"role":"user","content":"task"}],"tools":[{"name":"new_answer","input_schema":{"type":"object"}}]}`},
	{WireGemini, "/v1beta/models/p:streamGenerateContent?alt=sse",
		`{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task"}]}],"tools":[{"functionDeclarations":[{"name":"new_answer"}]}]}`,
		`{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task"}]}],"tools":[{"functionDeclarations":[{"name":"new_answer"}]}]}`},
}

// Every wire takes its steps from the model's one queue, waits TTFT, paces
// the text and the argument tokens alike and counts the same tokens.
func TestWiresShareScriptPacingAndCounts(t *testing.T) {
	const ttft = 40 * time.Millisecond
	step := `{text: "Thinking about it first.", calls: [{name: new_answer, arguments: '{"content":"one two three four"}'}]}`
	f := start(t, scenario(t, `models: {p: {ttft_ms: 40, tokens_per_second: 500, steps: [`+strings.Repeat(step+", ", 8)+`]}}`))
	root := strings.TrimSuffix(f.base, "/v1")
	want := (&plan{text: "Thinking about it first.", calls: []toolCall{{"new_answer", `{"content":"one two three four"}`}}}).tokens()
	minGen := time.Duration(want-1) * time.Second / 500
	for _, wc := range wireCalls {
		for _, stream := range []bool{true, false} {
			path, body := wc.path, wc.stream
			if !stream {
				path, body = strings.Replace(path, ":streamGenerateContent?alt=sse", ":generateContent", 1), wc.whole
			}
			t0 := time.Now()
			resp, err := f.hc.Post(root+path, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(t0)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s stream=%v: %d %s %v", wc.wire, stream, resp.StatusCode, raw, err)
			}
			if !strings.Contains(string(raw), "first.") {
				t.Errorf("%s stream=%v: no text in %s", wc.wire, stream, raw)
			}
			rec := lastRecord(t, f)
			if rec.Wire != wc.wire || rec.Stream != stream || rec.Step != "calls" || rec.Outcome != OutcomeCompleted ||
				rec.OutputTokens != want || rec.PromptTokens != 1 || strings.Join(rec.Tools, ",") != "new_answer" {
				t.Errorf("%s stream=%v: record %+v, want %d tokens", wc.wire, stream, rec, want)
			}
			if len(rec.Messages) != 2 || rec.Messages[0].Role != "system" || rec.Messages[1].Content != "task" {
				t.Errorf("%s: messages %+v", wc.wire, rec.Messages)
			}
			if d := rec.FirstByte.Sub(rec.Start); d < ttft {
				t.Errorf("%s stream=%v: first byte after %v", wc.wire, stream, d)
			}
			if took < ttft+minGen {
				t.Errorf("%s stream=%v: took %v, want >= %v", wc.wire, stream, took, ttft+minGen)
			}
		}
	}
	if n := len(f.sim.Requests()); n != 2*len(wireCalls) {
		t.Errorf("%d requests", n)
	}
}
