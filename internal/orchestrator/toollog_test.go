package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// A simulated run whose agent calls test tools in two rounds, logged by a
// real runlog.Writer: each call is in coordination_events.json and .jsonl
// with its agent, tool, argument and result previews, duration and
// outcome; the turn's rounds reach turn_ended, status.json, the table and
// the Result.
func TestToolCallsReachTheLogFilesEndToEnd(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a:
    steps:
      - calls:
          - {name: add, arguments: '{"a":2,"b":3}'}
      - expect_results: [{name: add, contains: "5"}]
        calls:
          - {name: lookup, arguments: '{"country":"Mars"}'}
          - {name: lookup, arguments: '{"country":"France"}'}
      - expect_results: [{name: lookup, contains: "no capital known"}, {name: lookup, contains: "Paris"}]
        answer: "2 + 3 = 5; Paris."
`, "a", "b")
	agents[0].Tools = tooltest.Set()
	broker := event.NewBroker()
	logs, err := runlog.New(filepath.Join(t.TempDir(), "logs"), time.Now(), runlog.Metadata{Question: "q",
		Agents: []runlog.AgentInfo{{ID: "a"}, {ID: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	logDone := make(chan error, 1)
	logSub := broker.Subscribe()
	go func() { logDone <- logs.Run(context.Background(), logSub) }()
	res := Run(t.Context(), "q", Options{Agents: agents, Events: broker})
	broker.Close()
	if err := <-logDone; err != nil {
		t.Fatal(err)
	}
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	for _, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("simulator refused request %d: %s", r.ID, r.Problem)
		}
	}
	if got, want := res.Tools["a"], (ToolUse{Calls: 3, Errors: 1, Rounds: 2}); got != want {
		t.Errorf("Result.Tools[a] = %+v, want %+v", got, want)
	}
	if got := res.Tools["b"]; got != (ToolUse{}) {
		t.Errorf("Result.Tools[b] = %+v, want none", got)
	}
	dir := logs.Dir()

	var ef struct {
		Events []event.Record `json:"events"`
	}
	readJSONFile(t, filepath.Join(dir, "coordination_events.json"), &ef)
	checkToolRecords(t, "coordination_events.json", ef.Events)
	f, err := os.Open(filepath.Join(dir, "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var journal []event.Record
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var r event.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("coordination_events.jsonl: %v", err)
		}
		journal = append(journal, r)
	}
	checkToolRecords(t, "coordination_events.jsonl", journal)

	var st runlog.StatusView
	readJSONFile(t, filepath.Join(dir, "status.json"), &st)
	if a := st.Agents["a"]; a.ToolCalls != 3 || a.ToolErrors != 1 || a.ToolRounds != 2 {
		t.Errorf("status.json a: tool_calls %d, tool_errors %d, tool_rounds %d; want 3, 1, 2", a.ToolCalls, a.ToolErrors, a.ToolRounds)
	}
	table, err := os.ReadFile(filepath.Join(dir, "coordination_table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool add ok ", "tool lookup error ", "tool lookup ok "} {
		if !strings.Contains(string(table), want) {
			t.Errorf("coordination_table.txt lacks %q:\n%s", want, table)
		}
	}
}

// checkToolRecords checks the tool_called and turn_ended records of agent
// a in one events file.
func checkToolRecords(t *testing.T, file string, recs []event.Record) {
	t.Helper()
	var calls []event.Record
	rounds := 0
	for _, r := range recs {
		switch {
		case r.Type == event.TypeToolCalled:
			calls = append(calls, r)
		case r.Type == event.TypeTurnEnded && r.Agent == "a":
			rounds += r.ToolRounds
		}
	}
	if rounds != 2 {
		t.Errorf("%s: a's turn_ended records say %d tool rounds, want 2", file, rounds)
	}
	want := []struct {
		tool, args, result string
		isError            bool
	}{
		{"add", `{"a":2,"b":3}`, "5", false},
		{"lookup", `{"country":"Mars"}`, `no capital known for "Mars"`, true},
		{"lookup", `{"country":"France"}`, "The capital of France is Paris.", false},
	}
	if len(calls) != len(want) {
		t.Fatalf("%s: %d tool_called records, want %d: %+v", file, len(calls), len(want), calls)
	}
	for i, w := range want {
		c := calls[i]
		if c.Agent != "a" || c.Text != w.tool || c.Args != w.args || c.Result != w.result || c.IsError != w.isError {
			t.Errorf("%s: call %d = agent %q tool %q args %s result %q error %v; want a %s %s %q %v",
				file, i, c.Agent, c.Text, c.Args, c.Result, c.IsError, w.tool, w.args, w.result, w.isError)
		}
		if c.DurationMS <= 0 || c.Seq == 0 || c.Time.IsZero() || c.Attempt != 1 {
			t.Errorf("%s: call %d: duration_ms %v, seq %d, time %s, attempt %d; want all set", file, i, c.DurationMS, c.Seq, c.Time, c.Attempt)
		}
	}
}
