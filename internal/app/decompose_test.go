package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/runlog"
)

// decompositionTeam is three simulated agents in decomposition mode: a
// and b have subtasks in the config, c's is written by the task
// decomposer (a's model's first call); each writes its part in its
// workspace, shares it with new_answer and stops; the presenter c merges
// the parts into one file and presents.
const decompositionTeam = `agents:
  - id: a
    subtask: "the parser: parse.txt"
    backend:
      type: sim
      model: ma
      cwd: ws_a
      scenario:
        models:
          ma:
            steps:
              - text: '{"subtasks": {"c": {"subtask": "the tests: tests.txt", "criteria": []}}}'
              - when: coordination
                calls: [{name: write_file, arguments: '{"path": "parse.txt", "content": "parse(expr) -> AST"}'}]
              - expect_results: [{name: write_file}]
                answer: "parser done in parse.txt"
              - calls: [{name: stop, arguments: '{"summary": "parser done, AST for the evaluator", "status": "complete"}'}]
  - id: b
    subtask: "the evaluator: eval.txt"
    backend:
      type: sim
      model: mb
      cwd: ws_b
      scenario:
        models:
          mb:
            steps:
              - calls: [{name: write_file, arguments: '{"path": "eval.txt", "content": "eval(AST) -> number"}'}]
              - expect_results: [{name: write_file}]
                answer: "evaluator done in eval.txt"
              - calls: [{name: stop, arguments: '{"summary": "evaluator done", "status": "complete"}'}]
  - id: c
    backend:
      type: sim
      model: mc
      cwd: ws_c
      scenario:
        models:
          mc:
            steps:
              - when: coordination
                calls: [{name: write_file, arguments: '{"path": "tests.txt", "content": "1+2 = 3"}'}]
              - expect_results: [{name: write_file}]
                answer: "tests done in tests.txt"
              - calls: [{name: stop, arguments: '{"summary": "tests pass", "status": "blocked"}'}]
              - when: presentation
                calls: [{name: write_file, arguments: '{"path": "calculator.txt", "content": "parse.txt + eval.txt + tests.txt"}'}]
              - when: presentation
                text: "Calculator assembled from the parser, the evaluator and the tests."
orchestrator:
  coordination_mode: decomposition
  presenter_agent: c
`

// Issue 19/21: decomposition mode end to end on the simulator — subtasks
// from the config and from the task decomposer, each agent's file in its
// workspace, stops instead of votes, the presenter's merge on disk, the
// prompts that carry the subtasks, and a replay log that reproduces the
// run.
func TestDecompositionEndToEndOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(decompositionTeam), 0o644))
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "Build a calculator", Team: Team{Config: filepath.Join(dir, "c.yaml")}, Overrides: Overrides{Timeout: 120}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Winner != "c" || !strings.Contains(out.Final, "Calculator assembled") || len(out.Failures) > 0 {
		t.Fatalf("status %s, winner %s, final %q, failures %v, err %v\n%s", out.Status, out.Winner, out.Final, out.Failures, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "decomposition") || strings.Contains(stderr.String(), "subtask") {
		t.Errorf("warnings: %s", stderr.String())
	}
	for id, file := range map[string]string{"a": "parse.txt", "b": "eval.txt", "c": "tests.txt"} {
		got, _ := filepath.Glob(filepath.Join(dir, ".massgen", "*", "*", id, file))
		more, _ := filepath.Glob(filepath.Join(dir, ".massgen", "*", "*", "*", id, file))
		if len(got)+len(more) == 0 {
			t.Errorf("%s's %s is nowhere under .massgen", id, file)
		}
	}
	var merged []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "calculator.txt" {
			merged = append(merged, p)
		}
		return nil
	})
	if len(merged) == 0 {
		t.Fatal("the presenter's calculator.txt is not on disk")
	}
	if b, _ := os.ReadFile(merged[0]); string(b) != "parse.txt + eval.txt + tests.txt" {
		t.Errorf("%s: %q", merged[0], b)
	}

	journal, err := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := string(journal)
	for _, want := range []string{
		"YOUR ASSIGNED SUBTASK: the parser: parse.txt",     // a's turn
		"YOUR ASSIGNED SUBTASK: the tests: tests.txt",      // c's, from the decomposer
		"assigning the agents' subtasks (task_decomposer)", // the decomposer's call
		"stop (complete): parser done, AST for the evaluator",
		"stop (blocked): tests pass",
		"(subtask: the evaluator: eval.txt)\\nStop summary: evaluator done (complete)", // the presenter's prompt
	} {
		if !strings.Contains(j, want) {
			t.Errorf("the events never say %q", want)
		}
	}
	if strings.Contains(j, `"type":"vote_accepted"`) && strings.Contains(j, "simulated vote") {
		t.Error("an agent voted in decomposition mode")
	}

	// The replay log reproduces the run: every step's commands follow
	// from its input.
	f, err := os.Open(filepath.Join(out.LogDir, runlog.ReplayName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := coord.ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Config.Decomposition || l.Config.Presenter != "c" {
		t.Errorf("replay config %+v", l.Config.Settings)
	}
	if d := l.Check(nil); d != nil {
		t.Errorf("the replay diverges at step %d", d.Step)
	}
	// A stop ends its turn: no agent calls stop again once it was
	// counted (nor after coordination ended), and stop is never run as a
	// tool of its own.
	stops := map[string]int{}
	for _, s := range l.Steps {
		if p, ok := s.In.(coord.Proposed); ok && p.Action.Kind == coord.ActStop {
			stops[p.Agent]++
			if v := s.Out[0].(coord.Reply).Verdict; v.Outcome != coord.Accepted {
				t.Errorf("%s's stop at turn %d: %s %s", p.Agent, p.Turn, v.Outcome, v.Message)
			}
		}
	}
	if stops["a"] == 0 || stops["b"] == 0 || stops["c"] == 0 {
		t.Errorf("stops %v", stops)
	}
	if strings.Contains(j, `"type":"tool_called","attempt":1,"epoch":`) && strings.Contains(j, `"text":"stop","args"`) {
		t.Error("stop was run as a tool")
	}
}
