package cli

import (
	"github.com/massgen/massgen/internal/coord"

	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
)

var updateStream = flag.Bool("update-stream", false, "rewrite testdata/stream_events.golden")

// streamLines parses --stream-events output and checks what every line
// owes a reader: valid JSON, version 1, seq counting lines from 1, and
// exactly one finished line, the last.
func streamLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, s := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, s)
		}
		if m["v"] != float64(1) || m["seq"] != float64(i+1) || m["time"] == "" {
			t.Fatalf("line %d: want v 1, seq %d and a time: %s", i+1, i+1, s)
		}
		if (m["type"] == "finished") != (i == len(strings.Split(strings.TrimRight(stdout, "\n"), "\n"))-1) {
			t.Fatalf("line %d: the finished line must be the last and only one: %s", i+1, s)
		}
		out = append(out, m)
	}
	return out
}

// The golden is one simulated single-agent run with the lines whose
// timing may vary between machines left out: streamed text (droppable by
// design) and turn_ended (its place relative to the next turn's vote is a
// race). Times, durations and paths are normalised. The left-out lines are
// checked on their own below.
func TestStreamEventsGolden(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--stream-events", "--config", "@examples/sim_single_agent", "What is 2+2?")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("stderr must stay quiet under --stream-events, got:\n%s", r.stderr)
	}
	lines := streamLines(t, r.stdout)
	var kept []string
	var in, out float64
	var deltas string
	for _, m := range lines {
		switch m["type"] {
		case "final_delta":
			deltas += m["text"].(string)
			continue
		case "turn_ended":
			in += m["input_tokens"].(float64)
			out += m["output_tokens"].(float64)
			continue
		case "finished":
			tu := m["total_usage"].(map[string]any)
			if tu["input_tokens"] != in || tu["output_tokens"] != out || in == 0 {
				t.Errorf("total_usage %v, want the turns' sum %v/%v", tu, in, out)
			}
			if !strings.HasPrefix(m["answer_file"].(string), m["log_dir"].(string)) {
				t.Errorf("answer_file %v not in log_dir %v", m["answer_file"], m["log_dir"])
			}
		}
		if m["time"] != nil {
			m["time"] = "TIME"
		}
		for _, k := range []string{"duration_ms", "log_dir", "answer_file", "session_id"} {
			if m[k] != nil {
				m[k] = strings.ToUpper(k)
			}
		}
		delete(m, "seq")
		b, _ := json.Marshal(m)
		kept = append(kept, string(b))
	}
	if deltas != "" && !strings.Contains(lines[len(lines)-1]["final_answer"].(string), deltas) {
		t.Errorf("final_delta text %q is not part of the final answer", deltas)
	}
	got := strings.Join(kept, "\n") + "\n"
	golden := filepath.Join("testdata", "stream_events.golden")
	if *updateStream {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-stream to create it)", err)
	}
	if got != string(want) {
		t.Errorf("stream changed; if on purpose, bump StreamVersion when a meaning changed, document it in the README and rerun with -update-stream\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestStreamEventsAllAgentsFailNamesAgentProviderStatus(t *testing.T) {
	cfg := `agents:
  - id: a
    backend:
      type: sim
      model: sim-a
      scenario:
        models:
          sim-a:
            steps: [{fault: "401"}, {fault: "401"}, {fault: "401"}, {fault: "401"}]
`
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--stream-events", "--no-logs", "--config", "c.yaml", "hi")
	if r.code != ExitExecution {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitExecution, r.stderr)
	}
	lines := streamLines(t, r.stdout)
	var errs int
	for _, m := range lines {
		if m["type"] == "agent_error" {
			errs++
		}
	}
	if errs == 0 {
		t.Errorf("no agent_error line:\n%s", r.stdout)
	}
	fin := lines[len(lines)-1]
	e, _ := fin["error"].(map[string]any)
	if fin["status"] != "failed" || fin["exit_code"] != float64(ExitExecution) || e == nil ||
		e["agent"] != "a" || e["provider"] != "sim" || e["model"] != "sim-a" || e["status"] != float64(401) || e["kind"] != "failed" {
		t.Errorf("finished line %v", fin)
	}
}

func TestStreamEventsConfigErrorEndsWithAFinishedLine(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--stream-events", "--config", "missing.yaml", "hi")
	if r.code != ExitConfig {
		t.Fatalf("exit %d", r.code)
	}
	lines := streamLines(t, r.stdout)
	fin := lines[0]
	e, _ := fin["error"].(map[string]any)
	if len(lines) != 1 || fin["status"] != "error" || e["kind"] != "config" || !strings.Contains(e["message"].(string), "missing.yaml") {
		t.Errorf("got %s", r.stdout)
	}
}

func TestModelsFlagBuildsATeamAndHistoryFileIsRead(t *testing.T) {
	hist := `[{"role":"user","content":"my name is Bob"},{"role":"assistant","content":"hello Bob"}]`
	r := massgen(t, t.Context(), map[string]string{"h.json": hist}, nil,
		"--stream-events", "--no-logs", "--models", "sim/alpha,sim/beta", "--history-file", "h.json", "What is my name?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := streamLines(t, r.stdout)
	agents := lines[0]["agents"].([]any)
	if len(agents) != 2 || agents[0].(map[string]any)["model"] != "alpha" || agents[1].(map[string]any)["model"] != "beta" {
		t.Errorf("team %v", agents)
	}
	if lines[len(lines)-1]["status"] != "completed" {
		t.Errorf("finished %v", lines[len(lines)-1])
	}

	bad := massgen(t, t.Context(), map[string]string{"h.json": `[{"role":"system","content":"x"}]`}, nil,
		"--no-logs", "--models", "sim/alpha", "--history-file", "h.json", "q")
	if bad.code != ExitConfig || !strings.Contains(bad.stderr, `role "system"`) {
		t.Errorf("bad history: exit %d, stderr %s", bad.code, bad.stderr)
	}
	both := massgen(t, t.Context(), nil, nil, "--models", "sim/a", "--config", "@examples/sim_single_agent", "q")
	if both.code != ExitConfig || !strings.Contains(both.stderr, "not several") {
		t.Errorf("--models with --config: exit %d, stderr %s", both.code, both.stderr)
	}
}

// A stream line's error is the failure the event carries, as data: no
// reading back of the provider, model or status from the message.
func TestStreamErrorsCarryTheFailureAsData(t *testing.T) {
	for _, tc := range []struct {
		f    coord.Failure
		kind string
	}{
		{coord.Failure{Kind: coord.FailRateLimit, Agent: "a1", Provider: "groq", Model: "llama-3.3-70b", Status: 429, Retryable: true, RetryAfterSeconds: 2}, "provider"},
		{coord.Failure{Kind: coord.FailAuth, Agent: "a1", Provider: "claude", Status: 401}, "provider"},
		{coord.Failure{Kind: coord.FailStall, Agent: "a1", Provider: "sim", Model: "sim-a", Retryable: true}, "provider"},
		{coord.Failure{Kind: coord.FailTimeout, Agent: "a1", Provider: "openai", Model: "gpt-5", Retryable: true}, "timeout"},
		{coord.Failure{Kind: coord.FailTool, Agent: "a1", Provider: "openai", Model: "gpt-5"}, "timeout"},
	} {
		got := agentError("a1", "some message", "timeout", &tc.f)
		want := &streamError{Message: "some message", Kind: tc.kind, Agent: "a1", Provider: tc.f.Provider, Model: tc.f.Model,
			Status: tc.f.Status, Failure: tc.f.Kind, Retryable: tc.f.Retryable, RetryAfterS: tc.f.RetryAfterSeconds}
		if *got != *want {
			t.Errorf("%s: got %+v, want %+v", tc.f.Kind, got, want)
		}
	}
	if got := agentError("a", "context deadline exceeded", "timeout", nil); got.Provider != "" || got.Kind != "timeout" || got.Failure != "" {
		t.Errorf("an error without a failure read as %+v", got)
	}
}

func TestStreamEventsInterruptedEndsWithAFinishedLine(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(500*time.Millisecond, cancel)
	r := massgen(t, ctx, map[string]string{"c.yaml": "agent: {id: a, backend: {type: sim, scenario: s.yaml}}\n", "s.yaml": hangScenario},
		nil, "--stream-events", "--config", "c.yaml", "q")
	if r.code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitInterrupted, r.stderr)
	}
	lines := streamLines(t, r.stdout)
	fin := lines[len(lines)-1]
	if fin["status"] != "interrupted" || fin["exit_code"] != float64(ExitInterrupted) || fin["final_answer"] != nil {
		t.Errorf("finished line %v", fin)
	}
}

// tool_call lines carry the tool, its arguments and result previews and
// its duration; restart and rejected lines their reasons.
func TestStreamEventsToolCallRestartRejected(t *testing.T) {
	cfg := `agents:
  - id: a
    backend:
      type: sim
      model: sim-a
      custom_tools:
        - {type: command, name: shout, command: [cat], description: Echo the input., parameters: {type: object, properties: {w: {type: string}}}}
      scenario:
        models:
          sim-a:
            steps:
              - calls: [{name: custom_tool__shout, arguments: '{"w":"hey"}'}]
              - fault: no_tool_call
              - answer: "first"
              - answer: "second"
  - id: b
    backend:
      type: sim
      model: sim-b
      scenario:
        models:
          sim-b:
            steps:
              - answer: "from b"
              - {fault: hang}
orchestrator: {wait_for_first_answers: false}
`
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--stream-events", "--no-logs", "--config", "c.yaml", "q")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stderr, r.stdout)
	}
	var tool, rejected, restart map[string]any
	for _, m := range streamLines(t, r.stdout) {
		switch m["type"] {
		case "tool_call":
			tool = m
		case "rejected":
			rejected = m
		case "restart":
			restart = m
		}
	}
	if tool == nil || tool["agent"] != "a" || tool["tool"] != "custom_tool__shout" || !strings.Contains(tool["args"].(string), "hey") ||
		!strings.Contains(tool["result"].(string), "hey") || tool["duration_ms"] == nil {
		t.Errorf("tool_call line %v", tool)
	}
	if rejected == nil || rejected["agent"] != "a" || !strings.Contains(rejected["reason"].(string), "workflow tool") {
		t.Errorf("rejected line %v", rejected)
	}
	if restart == nil || restart["agent"] != "b" || restart["target"] != "a" || restart["reason"] == "" {
		t.Errorf("restart line %v\n%s", restart, r.stdout)
	}
}

// A tool's progress is a tool_progress line with the tool, how far of how
// much, and the message as text.
func TestStreamEventsToolProgressLine(t *testing.T) {
	s := &eventStream{}
	l, ok := s.line(event.ToolProgress{Agent: "a", Tool: "mcp__e__op", Progress: 2, Total: 4, Message: "half"})
	if !ok {
		t.Fatal("tool_progress is left out of the stream")
	}
	b, _ := json.Marshal(l)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["type"] != "tool_progress" || m["agent"] != "a" || m["tool"] != "mcp__e__op" || m["progress"] != 2.0 || m["total"] != 4.0 || m["text"] != "half" {
		t.Errorf("tool_progress line %s", b)
	}
	l, _ = s.line(event.ToolProgress{Agent: "a", Tool: "mcp__e__op", Message: "log info: x"})
	b, _ = json.Marshal(l)
	if !strings.Contains(string(b), `"progress":0`) || strings.Contains(string(b), `"total"`) {
		t.Errorf("a log message's line %s: want progress 0 and no total", b)
	}
}
