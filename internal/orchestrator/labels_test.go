package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
)

// Labels used to shift as agents answered: the first answer of a run was
// "agent1.1" whoever wrote it, so the table, the events file and status.json
// gave different agents the same label. Here c answers first, then a, then
// b; every log file must name each answer agent<config position>.<revision>
// next to its author, and the files must agree.
func TestEveryLogFileNamesAnswersWithOneStableLabel(t *testing.T) {
	srv, agents := simTeam(t, `
models:
  sim-a: {steps: [{answer: "A one."}]}
  sim-b: {steps: [{answer: "B one."}]}
  sim-c: {steps: [{answer: "C one."}]}
`, "a", "b", "c")
	broker := event.NewBroker()
	answered := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	sub := broker.Subscribe(event.Deltas...)
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if a, ok := e.(event.AnswerAccepted); ok && answered[a.Agent] != nil {
				close(answered[a.Agent])
				answered[a.Agent] = nil
			}
		}
	}()
	after := func(ch chan struct{}) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			select {
			case <-ch:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	agents[0].Model = &gatedModel{Model: agents[0].Model, gate: after(answered["c"])} // a after c
	agents[1].Model = &gatedModel{Model: agents[1].Model, gate: after(answered["a"])} // b after a
	_ = srv

	logs, err := runlog.New(filepath.Join(t.TempDir(), "logs"), time.Now(), runlog.Metadata{Question: "q",
		Agents: []runlog.AgentInfo{{ID: "a"}, {ID: "b"}, {ID: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	logDone := make(chan error, 1)
	logSub := broker.Subscribe()
	go func() { logDone <- logs.Run(context.Background(), logSub) }()
	res := Run(t.Context(), "q", Options{Agents: agents, Events: broker})
	broker.Close()
	<-watch
	if err := <-logDone; err != nil {
		t.Fatal(err)
	}
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Status != Completed {
		t.Fatalf("status = %s (%v)", res.Status, res.Err)
	}
	want := map[string]string{"a": "agent1.1", "b": "agent2.1", "c": "agent3.1"} // author → its first answer's label
	dir := logs.Dir()

	// coordination_events.json: answers in the order c, a, b, each with its stable label.
	var ef struct {
		Events []event.Record `json:"events"`
	}
	readJSONFile(t, filepath.Join(dir, "coordination_events.json"), &ef)
	var order []string
	for _, r := range ef.Events {
		switch r.Type {
		case event.TypeAnswerAccepted:
			order = append(order, r.Agent)
			if strings.HasSuffix(r.Label, ".1") && r.Label != want[r.Agent] {
				t.Errorf("events file: %s's first answer labelled %s, want %s", r.Agent, r.Label, want[r.Agent])
			}
		case event.TypeVoteAccepted:
			if r.TargetAnswer == "" || !strings.HasPrefix(r.TargetAnswer, strings.TrimSuffix(want[r.Target], ".1")+".") {
				t.Errorf("events file: vote for %s names answer %q", r.Target, r.TargetAnswer)
			}
		}
	}
	if len(order) < 3 || order[0] != "c" || order[1] != "a" || order[2] != "b" {
		t.Fatalf("answers came in order %v, want c, a, b first", order)
	}

	// status.json: each agent's latest answer carries its own position.
	var st runlog.StatusView
	readJSONFile(t, filepath.Join(dir, "status.json"), &st)
	for id, label := range want {
		if got := st.Agents[id].LatestAnswerLabel; !strings.HasPrefix(got, strings.TrimSuffix(label, ".1")+".") {
			t.Errorf("status.json: %s's latest answer is %q, want %s.<revision>", id, got, strings.TrimSuffix(label, ".1"))
		}
	}

	// vote.json: the anonymous labels map to authors and stable labels that agree.
	var vs struct {
		Labels       map[string]string `json:"labels"`
		AnswerLabels map[string]string `json:"answer_labels"`
		Votes        []struct {
			VotedFor       string `json:"voted_for"`
			VotedForAnswer string `json:"voted_for_answer"`
		} `json:"votes"`
	}
	readJSONFile(t, filepath.Join(dir, "vote.json"), &vs)
	if len(vs.Labels) != 3 {
		t.Errorf("vote.json labels = %v, want the three answers", vs.Labels)
	}
	for anon, id := range vs.Labels {
		if got := vs.AnswerLabels[anon]; !strings.HasPrefix(got, strings.TrimSuffix(want[id], ".1")+".") {
			t.Errorf("vote.json: %s is %s's, but its answer label is %q", anon, id, got)
		}
	}
	for _, v := range vs.Votes {
		if !strings.HasPrefix(v.VotedForAnswer, strings.TrimSuffix(want[v.VotedFor], ".1")+".") {
			t.Errorf("vote.json: a vote for %s names answer %q", v.VotedFor, v.VotedForAnswer)
		}
	}

	// coordination_table.txt: "answered <label>" only ever in its author's column.
	table, err := os.ReadFile(filepath.Join(dir, "coordination_table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for id, label := range want {
		if !strings.Contains(string(table), "answered "+label) {
			t.Errorf("table lacks %s's answer %s:\n%s", id, label, table)
		}
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
