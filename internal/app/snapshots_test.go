package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedRunName makes a run's directories known before it starts, so a
// scenario can name the paths of the others' snapshots.
func fixedRunName(t *testing.T) {
	old := runName
	runName = func(time.Time) string { return "run1" }
	t.Cleanup(func() { runName = old })
}

// A simulated three-agent run on a small fixture project: each agent
// writes in its own workspace and answers; every agent then finds the
// others' files read-only under the labels of its prompt, and is refused
// both writing there and reading a live workspace; the winner keeps its
// own files across its turns and writes the project (a write context path)
// in the final presentation. Snapshots, the views, the logs' per-answer
// copies and snapshot_mappings.json are checked on disk.
func TestThreeAgentsShareSnapshotsReadOnly(t *testing.T) {
	fixedRunName(t)
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.CopyFS(proj, os.DirFS("testdata/fixture-repo")))
	views := filepath.Join(work, ".massgen", "temp_workspaces", "run1")
	view := func(viewer string) string { return filepath.Join(views, viewer) }
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: alpha
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          alpha:
            steps:
              - calls:
                  - {name: read_file, arguments: '{"path": "%[1]s/greet.py"}'}
                  - {name: write_file, arguments: '{"path": "plan.md", "content": "alpha plan: say hello politely"}'}
              - expect_results:
                  - {name: read_file, contains: "def greet"}
                  - {name: write_file, contains: "created"}
                answer: "A: the plan is in plan.md."
              - when: coordination
                calls:
                  - {name: read_file, arguments: '{"path": "%[2]s/agent2/b.txt"}'}
                  - {name: write_file, arguments: '{"path": "%[2]s/agent2/b.txt", "content": "overwritten by a"}'}
              - expect_results:
                  - {name: read_file, contains: "beta notes"}
                  - {name: write_file, contains: "refused"}
                vote: agent1
              - calls:
                  - {name: read_file, arguments: '{"path": "plan.md"}'}
                  - {name: write_file, arguments: '{"path": "%[1]s/greet.py", "content": "def greet(name):\n    return f\"Hello, {name}!\"\n"}'}
              - expect_results:
                  - {name: read_file, contains: "alpha plan"}
                  - {name: write_file, contains: "greet.py"}
                text: "greet.py now says hello politely."
  - id: b
    backend:
      type: sim
      model: beta
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          beta:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "b.txt", "content": "beta notes"}'}
              - answer: "B: notes in b.txt."
              - when: coordination
                calls:
                  - {name: read_file, arguments: '{"path": "%[3]s/agent1/plan.md"}'}
                  - {name: read_file, arguments: '{"path": "../a/plan.md"}'}
                  - {name: delete_file, arguments: '{"path": "%[3]s/agent1/plan.md"}'}
              - expect_results:
                  - {name: read_file, contains: "alpha plan"}
                  - {name: read_file, contains: "refused"}
                  - {name: delete_file, contains: "refused"}
                vote: agent1
  - id: c
    backend:
      type: sim
      model: gamma
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          gamma:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "c.txt", "content": "gamma notes"}'}
              - answer: "C: notes in c.txt."
              - when: coordination
                calls:
                  - {name: list_directory, arguments: '{"path": "%[4]s"}'}
                  - {name: read_file, arguments: '{"path": "%[4]s/agent3/c.txt"}'}
              - expect_results:
                  - {name: list_directory, contains: "agent2"}
                  - {name: read_file, contains: "gamma notes"}
                vote: agent1
ui: {enable_final_presentation: true}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  context_paths:
    - {path: project, permission: write}
`, proj, view("a"), view("b"), view("c"))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{
		Question:  "Make greet polite.",
		Team:      Team{ConfigYAML: []byte(yaml)},
		Overrides: Overrides{Timeout: 120},
		Logging:   Logging{LogDir: filepath.Join(work, "logs")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "greet.py now says hello politely." {
		t.Fatalf("status %s, winner %q, final %q (tally %v), err %v; stderr:\n%s", out.Status, out.Winner, out.Final, out.Tally, out.Err, stderr.String())
	}
	for id, n := range map[string]int{"a": 6, "b": 4, "c": 3} {
		if u := out.Tools[id]; u.Calls != n {
			t.Errorf("agent %s made %d tool calls, want %d", id, u.Calls, n)
		}
	}
	if strings.Contains(stderr.String(), "accepted but ignored") || strings.Contains(stderr.String(), "snapshot") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
		}
		return string(b)
	}
	// The result is in the project, and the winner's files in the logs.
	if got := read(filepath.Join(proj, "greet.py")); !strings.Contains(got, "Hello, {name}!") {
		t.Errorf("greet.py: %q", got)
	}
	if got := read(filepath.Join(out.LogDir, "final", "a", "workspace", "plan.md")); got != "alpha plan: say hello politely" {
		t.Errorf("final workspace: %q", got)
	}
	// Snapshots: one per answer, an independent copy of the live file.
	store := filepath.Join(work, ".massgen", "snapshots", "run1")
	for id, f := range map[string]string{"a": "plan.md", "b": "b.txt", "c": "c.txt"} {
		snap := filepath.Join(store, id, "1", f)
		fi, err := os.Stat(snap)
		if err != nil {
			t.Fatal(err)
		}
		live, _ := os.Stat(filepath.Join(work, ".massgen", "workspaces", "run1", id, f))
		if os.SameFile(fi, live) {
			t.Errorf("%s shares its inode with the live workspace: a command could change the snapshot", snap)
		}
	}
	// The views: every agent sees the three answers' files under agent1..3,
	// unchanged by the attempts to write there.
	for _, viewer := range []string{"a", "b", "c"} {
		for label, want := range map[string]string{"agent1/plan.md": "alpha plan: say hello politely", "agent2/b.txt": "beta notes", "agent3/c.txt": "gamma notes"} {
			if got := read(filepath.Join(view(viewer), label)); got != want {
				t.Errorf("%s sees %s = %q, want %q", viewer, label, got, want)
			}
		}
	}
	// The logs keep each answer's workspace, and what came from where.
	for id, f := range map[string]string{"a": "plan.md", "b": "b.txt", "c": "c.txt"} {
		m, _ := filepath.Glob(filepath.Join(out.LogDir, "agent_"+id, "*", "workspace", f))
		if len(m) != 1 {
			t.Errorf("agent %s: %d copies of %s in the logs' answer steps, want 1", id, len(m), f)
		}
	}
	var maps map[string]snapshotMapping
	if err := json.Unmarshal([]byte(read(filepath.Join(out.LogDir, "snapshot_mappings.json"))), &maps); err != nil {
		t.Fatal(err)
	}
	for label, id := range map[string]string{"agent1.1": "a", "agent2.1": "b", "agent3.1": "c"} {
		m := maps[label]
		if m.AgentID != id || m.Path != filepath.Join(store, id, "1") || m.Files != 1 || filepath.Base(m.Source) != id {
			t.Errorf("snapshot_mappings[%s] = %+v", label, m)
		}
	}
}
