package llmsim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const streamBody = `{"model":"m","stream":true,"stream_options":{"include_usage":true},
"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"task"}]}],
"tools":[{"type":"function","function":{"name":"new_answer","parameters":{"type":"object"}}}]}`

// rawSSE posts body and returns the data payloads of the SSE events.
func rawSSE(t *testing.T, f *fixture, body string) (http.Header, []string) {
	t.Helper()
	resp, err := f.hc.Post(f.base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, sseData(t, string(raw))
}

// sseData splits an SSE body into its data payloads, checking the framing:
// every event is one "data: " line followed by a blank line.
func sseData(t *testing.T, raw string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n") {
		ev = strings.TrimSpace(ev)
		if !strings.HasPrefix(ev, "data: ") || strings.Contains(ev, "\n") {
			t.Fatalf("bad event %q", ev)
		}
		out = append(out, strings.TrimPrefix(ev, "data: "))
	}
	return out
}

// shape describes a chunk's structure (keys and value kinds, not values), so
// that the simulator's chunks can be compared with recorded real ones.
func shape(t *testing.T, data string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("chunk %s: %v", data, err)
	}
	delete(m, "obfuscation") // OpenAI's padding against side channels; optional
	var describe func(v any) string
	describe = func(v any) string {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k, x := range v {
				keys = append(keys, k+":"+describe(x))
			}
			sort.Strings(keys)
			return "{" + strings.Join(keys, ",") + "}"
		case []any:
			if len(v) == 0 {
				return "[]"
			}
			return "[" + describe(v[0]) + "]"
		case nil:
			return "null"
		case string:
			return "s"
		case float64:
			return "n"
		case bool:
			return "b"
		}
		return "?"
	}
	return describe(m)
}

func TestWireShapeMatchesRecordings(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{calls: [{name: add, arguments: '{"a": 2, "b": 3}'}, {name: multiply, arguments: '{"a": 2, "b": 3}'}]}]}}`))
	h, data := rawSSE(t, f, streamBody)
	if ct := h.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Errorf("content-type %q", ct)
	}
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last event %q", data[len(data)-1])
	}
	_, text := rawSSE(t, f, strings.Replace(streamBody, `"tools"`, `"x_tools"`, 1))
	ours := map[string]bool{}
	for _, d := range append(data[:len(data)-1], text[:len(text)-1]...) {
		ours[shape(t, d)] = true
	}

	dir := "../../../shared/reference/provider-recordings/TestOpenAICommon/openai-gpt-4o"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("recordings not available (%v): wire shape not compared", err)
	}
	real := map[string]bool{}
	for _, name := range []string{"simple_streaming.yaml", "tool_streaming.yaml", "multi_tool_streaming.yaml"} {
		src, err := os.ReadFile(dir + "/" + name)
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
			for _, d := range sseData(t, in.Response.Body) {
				if d != "[DONE]" {
					real[shape(t, d)] = true
				}
			}
		}
	}
	for s := range ours {
		if !real[s] {
			t.Errorf("chunk shape not seen in real OpenAI traffic:\n%s", s)
		}
	}
}

func TestSSEFramingAndIDs(t *testing.T) {
	f := start(t, nil)
	_, data := rawSSE(t, f, streamBody)
	var first struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Delta map[string]any `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.ID != "chatcmpl-sim000001" || first.Object != "chat.completion.chunk" || first.Model != "m" ||
		first.Choices[0].Delta["role"] != "assistant" {
		t.Errorf("first chunk %s", data[0])
	}
	if !strings.Contains(data[1], `"tool_calls":[{"index":0,"id":"call_sim000001_0","type":"function","function":{"name":"new_answer","arguments":""}}]`) {
		t.Errorf("tool header chunk %s", data[1])
	}
	if !strings.Contains(data[len(data)-3], `"finish_reason":"tool_calls"`) || !strings.Contains(data[len(data)-2], `"choices":[],"usage":{`) {
		t.Errorf("tail %q", data[len(data)-3:])
	}
	// Array content parts are read as text.
	if rec := lastRecord(t, f); rec.Messages[1].Content != "task" {
		t.Errorf("messages %+v", rec.Messages)
	}
}

func TestRoutesAndBadRequests(t *testing.T) {
	f := start(t, scenario(t, `models: {"*": {final: x}, zeta: {}, alpha: {}}`))
	ctx := testCtx(t)
	page, err := f.client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"alpha", "zeta"}) {
		t.Errorf("models %v", ids)
	}
	if m, err := f.client.Models.Get(ctx, "anything"); err != nil || m.ID != "anything" {
		t.Errorf("model %+v, %v", m, err)
	}

	cases := []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/nope", "{}", 404},
		{"GET", "/", "", 404},
		{"GET", "/v1/chat/completions", "", 405},
		{"POST", "/v1/chat/completions", "{not json", 400},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[]}`, 400},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":42}]}`, 400},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{}}]}`, 400},
	}
	root := strings.TrimSuffix(f.base, "/v1")
	for _, tc := range cases {
		req, _ := http.NewRequestWithContext(ctx, tc.method, root+tc.path, strings.NewReader(tc.body))
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body errorBody
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || err != nil || body.Error.Message == "" || body.Error.Type == "" {
			t.Errorf("%s %s %s: %d %+v %v", tc.method, tc.path, tc.body, resp.StatusCode, body, err)
		}
	}
	recs := f.sim.Requests()
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5 rejected", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != OutcomeRejected || r.Step != "invalid_request" {
			t.Errorf("record %+v", r)
		}
	}
}

func TestHandlerMountedElsewhere(t *testing.T) {
	sim := New(scenario(t, `models: {m: {always: {fault: hang}}}`))
	ts := httptest.NewServer(sim.Handler())
	defer ts.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("sim"),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}))
	ctx := testCtx(t)
	res, err := client.Chat.Completions.New(ctx, params("other", "hi"))
	if err != nil || !strings.HasPrefix(res.Choices[0].Message.Content, "[sim model other] Final answer") {
		t.Fatalf("%+v %v", res, err)
	}
	// Close aborts exchanges even though the http.Server is not ours.
	done := make(chan error, 1)
	go func() { _, err := client.Chat.Completions.New(ctx, params("m", "hi")); done <- err }()
	if err := sim.WaitFor(ctx, func(rs []Record) bool { return len(rs) == 2 }); err != nil {
		t.Fatal(err)
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("no error from an exchange aborted by Close")
	}
	if rec := sim.Requests()[1]; rec.Outcome != OutcomeCancelled {
		t.Errorf("record %+v", rec)
	}
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/sc.yaml"
	if err := os.WriteFile(path, []byte(`models: {m: {final: "served"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", path, logf) }()

	var base string
	re := regexp.MustCompile(`http://\S+/v1`)
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		if len(lines) > 0 {
			base = re.FindString(lines[0])
		}
		mu.Unlock()
	}
	if base == "" {
		t.Fatalf("no base URL logged: %q", lines)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("sim"),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}))
	res, err := client.Chat.Completions.New(ctx, params("m", "hi"))
	if err != nil || res.Choices[0].Message.Content != "served" {
		t.Fatalf("%+v %v", res, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 2 || !strings.Contains(lines[1], "model=m") || !strings.Contains(lines[1], "outcome=completed") {
		t.Errorf("log lines %q", lines)
	}

	if err := Serve(context.Background(), "127.0.0.1:0", dir+"/missing.yaml", nil); err == nil {
		t.Error("Serve with a missing scenario: no error")
	}
}

func TestWaitForHonoursContext(t *testing.T) {
	sim := New(nil)
	defer sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := sim.WaitFor(ctx, func([]Record) bool { return false }); err != context.DeadlineExceeded {
		t.Errorf("err = %v", err)
	}
}

// BenchmarkStreams256 measures the simulator at zero latency under 256
// concurrent streaming requests (raw HTTP, so that client-side JSON decoding
// does not dominate).
func BenchmarkStreams256(b *testing.B) {
	sim := New(nil)
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	hc := &http.Client{Transport: tr}
	defer func() { sim.Close(); tr.CloseIdleConnections() }()
	b.SetParallelism(max(1, 256/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := hc.Post(base+"/chat/completions", "application/json", strings.NewReader(streamBody))
			if err != nil {
				b.Error(err)
				return
			}
			sc := bufio.NewScanner(resp.Body)
			last := ""
			for sc.Scan() {
				if l := sc.Text(); l != "" {
					last = l
				}
			}
			resp.Body.Close()
			if last != "data: [DONE]" {
				b.Errorf("stream ended with %q", last)
				return
			}
		}
	})
}
