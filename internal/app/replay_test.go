package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/runlog"
)

// The event log is the replay log (issue 8 §1.4): a real run on the
// simulator — a turn cut mid-stream and retried, answers, votes, a
// presentation, a post-evaluation that restarts the run, a second attempt —
// leaves coordination_replay.jsonl in its log directory, and a fresh
// machine fed its inputs gives exactly the commands the run got.
func TestARunsLogDirectoryReplaysThroughAFreshMachine(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"c.yaml": `agents:
  - {id: researcher, backend: {type: sim, model: sim-a, scenario: s.yaml}}
  - {id: critic, backend: {type: sim, model: sim-b, scenario: s.yaml}}
  - {id: writer, backend: {type: sim, model: sim-c, scenario: s.yaml}}
orchestrator:
  coordination: {max_orchestration_restarts: 1}
ui: {logging_enabled: true}
`,
		// Whoever wins restarts the run once; sim-b's first turn is cut.
		"s.yaml": `models:
  "*":
    steps:
      - {when: evaluation, restart: "the answer cites no source", reason: "cite one"}
  sim-b:
    steps:
      - {fault: cut, text: "half an answer that never ends"}
      - {when: evaluation, restart: "the answer cites no source", reason: "cite one"}
`,
	}
	env := simDir(t, dir, files)
	out, err := Execute(t.Context(), env, Request{Question: "What is the capital of France?", Team: Team{Config: "c.yaml"}, Logging: Logging{LogDir: filepath.Join(dir, "logs")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Attempts != 2 {
		t.Fatalf("status=%s attempts=%d (%v), want completed in two attempts", out.Status, out.Attempts, out.Err)
	}

	f, err := os.Open(filepath.Join(out.LogDir, runlog.ReplayName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := coord.ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"researcher", "critic", "writer"}; !cmp.Equal(log.Config.Agents, want) || log.Config.MaxRestarts != 1 {
		t.Errorf("the log's machine config = %+v, want the team %v with one restart", log.Config, want)
	}
	kinds := map[string]bool{}
	for _, s := range log.Steps {
		kinds[coord.InputKind(s.In)] = true
	}
	for _, k := range []string{"start", "proposed", "turn_failed", "presented", "evaluated"} {
		if !kinds[k] {
			t.Errorf("the replay log has no %s input: the run did not do what the test needs", k)
		}
	}
	last := log.Steps[len(log.Steps)-1].Out
	if fin, ok := last[len(last)-1].(coord.Finish); !ok || fin.Status != coord.RunCompleted || fin.Attempt != 2 || fin.Final != out.Final {
		t.Fatalf("the log does not end with the run's Finish: %+v", last)
	}
	if diff := cmp.Diff(log.Steps, log.Replay(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("replaying the log directory's inputs gives other commands (-recorded +replayed):\n%s", diff)
	}
}

// simDir writes files into dir and returns an Env that runs there, with
// no API keys and HOME in dir.
func simDir(t *testing.T, dir string, files map[string]string) *Env {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Env{Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}, Stderr: discard{}, WorkDir: dir}
}
