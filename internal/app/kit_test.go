package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/kit/skills"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// systemOf is the system prompt of the first request of model in recs
// from index from on.
func systemOf(recs []llmsim.Record, model string, from int) string {
	for _, r := range recs[from:] {
		if r.Model == model && len(r.Messages) > 0 && r.Messages[0].Role == "system" {
			return r.Messages[0].Content
		}
	}
	return ""
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Filesystem memory over a two-turn session, learning_capture_mode:
// verification_and_final_only: during the rounds only the verification
// memo may be written (other memory writes are refused and leave nothing);
// the winner writes memories in its final presentation; the loser's memo
// is merged into the winner's workspace under "From Agent b"; the log
// keeps it; the next turn's agents start with those memories, shown in
// their prompt.
func TestMemorySessionCapturesMergesAndCarries(t *testing.T) {
	srv, url := simtest.Start(t, `models:
  mem-a:
    steps:
      - calls:
          - {name: write_file, arguments: '{"path": "memory/short_term/prefs.md", "content": "too early"}'}
          - {name: write_file, arguments: '{"path": "memory/short_term/verification_latest.md", "content": "a verified with pytest"}'}
      - expect_results:
          - {name: write_file, contains: "writable only by the winner during the final presentation"}
          - {name: write_file, contains: "replaced"}
        answer: "A's answer"
      - when: coordination
        vote: agent1
      - when: presentation
        calls:
          - {name: write_file, arguments: '{"path": "memory/short_term/prefs.md", "content": "user prefers tables"}'}
          - {name: write_file, arguments: '{"path": "memory/long_term/analysis.md", "content": "---\ndescription: how the numbers were checked\n---\nlong body"}'}
      - expect_results:
          - {name: write_file, contains: "created"}
          - {name: write_file, contains: "created"}
        text: "Final from A."
  mem-b:
    steps:
      - calls:
          - {name: write_file, arguments: '{"path": "memory/short_term/verification_latest.md", "content": "b checked by hand"}'}
          - {name: write_file, arguments: '{"path": "memory/short_term/b_only.md", "content": "b note"}'}
      - expect_results:
          - {name: write_file, contains: "replaced"}
          - {name: write_file, contains: "writable only by the winner"}
        answer: "B's answer"
      - when: coordination
        vote: agent1
`)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, fmt.Appendf(nil, `agents:
  - id: a
    backend: {type: chatcompletion, base_url: %[1]q, api_key: sk-x, model: mem-a, cwd: ws_a}
  - id: b
    backend: {type: chatcompletion, base_url: %[1]q, api_key: sk-x, model: mem-b, cwd: ws_b}
ui: {enable_final_presentation: true}
orchestrator:
  coordination:
    enable_memory_filesystem_mode: true
    learning_capture_mode: verification_and_final_only
`, url), 0o644))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	s, err := OpenSession(t.Context(), env, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	out, err := s.Turn(t.Context(), Request{Question: "Check the numbers.", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Winner != "a" {
		t.Fatalf("turn 1: status %s, winner %q, err %v; stderr:\n%s", out.Status, out.Winner, out.Err, stderr.String())
	}
	for _, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("request %d (%s): %s", r.ID, r.Model, r.Problem)
		}
	}
	if strings.Contains(stderr.String(), "ignored") {
		t.Errorf("stderr says something was ignored:\n%s", stderr.String())
	}
	mem := filepath.Join(out.Workspace, "memory")
	memo := readFile(t, filepath.Join(mem, "short_term", "verification_latest.md"))
	if !strings.Contains(memo, "a verified with pytest") || !strings.Contains(memo, "## From Agent b") || !strings.Contains(memo, "b checked by hand") {
		t.Errorf("winner's memo after the merge:\n%s", memo)
	}
	if got := readFile(t, filepath.Join(mem, "short_term", "prefs.md")); got != "user prefers tables" {
		t.Errorf("prefs.md = %q, want the presentation's", got)
	}
	// The refused writes left nothing, in either workspace.
	bws := filepath.Join(filepath.Dir(out.Workspace), "b")
	for _, p := range []string{filepath.Join(mem, "short_term", "b_only.md"), filepath.Join(bws, "memory", "short_term", "b_only.md"),
		filepath.Join(bws, "memory", "short_term", "prefs.md")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after its write was refused (%v)", p, err)
		}
	}
	logged := filepath.Join(out.LogDir, "final", "a", "workspace", "memory", "long_term", "analysis.md")
	if !strings.Contains(readFile(t, logged), "long body") {
		t.Errorf("the log's copy of the winner's memory lacks analysis.md")
	}

	// Turn 2 starts from the winner's memories: on disk and in the prompt.
	before := len(srv.Requests())
	out2, err := s.Turn(t.Context(), Request{Question: "Now the totals.", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if out2.Status != "completed" {
		t.Fatalf("turn 2: status %s, err %v", out2.Status, out2.Err)
	}
	for _, id := range []string{"a", "b"} {
		p := filepath.Join(filepath.Dir(out2.Workspace), id, "memory", "short_term", "prefs.md")
		if got := readFile(t, p); got != "user prefers tables" {
			t.Errorf("turn 2, agent %s: prefs.md = %q", id, got)
		}
	}
	sys := systemOf(srv.Requests(), "mem-b", before)
	for _, want := range []string{"<memory priority=\"high\">", "user prefers tables", "memory/long_term/analysis.md: how the numbers were checked",
		"Verification replay memo", "a verified with pytest", "read-only while the agents coordinate, except the verification memo"} {
		if !strings.Contains(sys, want) {
			t.Errorf("turn 2's system prompt lacks %q:\n%s", want, sys)
		}
	}
}

// Skills end to end: the project's skill and a shipped one are offered in
// the prompt and readable with read_file and inside the command sandbox;
// the skills directory is read-only while coordinating (file tool and
// command alike, nothing changes on disk) and writable by the winner in
// the final presentation, where it saves a new skill.
func TestSkillsOfferedReadOnlyThenSavedByTheWinner(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("bubblewrap is not installed")
	}
	work := t.TempDir()
	proj := filepath.Join(work, ".agent", "skills")
	must(t, os.MkdirAll(filepath.Join(proj, "csv-helper"), 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "csv-helper", "SKILL.md"),
		[]byte("---\nname: csv-helper\ndescription: Clean CSV files\n---\nSplit on commas, then trim.\n"), 0o644))
	builtin := skills.BuiltinDir(filepath.Join(work, ".massgen", "skills"))
	srv, url := simtest.Start(t, fmt.Sprintf(`models:
  sk:
    steps:
      - calls:
          - {name: read_file, arguments: '{"path": "%[1]s/csv-helper/SKILL.md"}'}
          - {name: write_file, arguments: '{"path": "%[1]s/csv-helper/SKILL.md", "content": "hijacked"}'}
          - {name: execute_command, arguments: '{"command": "cat %[1]s/csv-helper/SKILL.md %[2]s/file-search/SKILL.md"}'}
      - expect_results:
          - {name: read_file, contains: "Split on commas"}
          - {name: write_file, contains: "writable only by the winner during the final presentation"}
          - {name: execute_command, contains: "name: file-search"}
        calls:
          - {name: execute_command, arguments: '{"command": "echo x > %[1]s/csv-helper/new.txt"}'}
      - expect_results:
          - {name: execute_command, contains: "Read-only file system"}
        answer: "Cleaned."
      - when: coordination
        vote: agent1
      - when: presentation
        calls:
          - {name: write_file, arguments: '{"path": "%[1]s/evolved/SKILL.md", "content": "---\nname: evolved\ndescription: what this run learned\nevolving: true\n---\nsteps"}'}
      - expect_results:
          - {name: write_file, contains: "created"}
        text: "Cleaned, and saved a skill."
`, proj, builtin))
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, fmt.Appendf(nil, `agents:
  - id: a
    backend: {type: chatcompletion, base_url: %q, api_key: sk-x, model: sk, cwd: ws, enable_mcp_command_line: true}
ui: {enable_final_presentation: true}
orchestrator:
  coordination:
    use_skills: true
    skills_directory: .agent/skills
`, url), 0o644))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Clean the CSV.", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("request %d: %s", r.ID, r.Problem)
		}
	}
	if out.Status != "completed" {
		t.Fatalf("status %s, err %v; stderr:\n%s", out.Status, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "ignored") {
		t.Errorf("stderr says something was ignored:\n%s", stderr.String())
	}
	if got := readFile(t, filepath.Join(proj, "csv-helper", "SKILL.md")); !strings.Contains(got, "Split on commas") {
		t.Errorf("the skill was changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(proj, "csv-helper", "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt exists: %v", err)
	}
	if got := readFile(t, filepath.Join(proj, "evolved", "SKILL.md")); !strings.Contains(got, "evolving: true") {
		t.Errorf("the saved skill: %q", got)
	}
	sys := systemOf(srv.Requests(), "sk", 0)
	for _, want := range []string{"<name>csv-helper</name><description>Clean CSV files</description>", "<name>file-search</name>",
		"<name>evolving-skill-creator</name>", "you may save what this task taught as a skill"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys)
		}
	}
}

// An agent without a workspace gets no memory or skills, and the run says
// so by name; the one with a workspace gets both.
func TestKitWarnsOfAgentsWithoutAWorkspace(t *testing.T) {
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(`agents:
  - {id: has, backend: {type: sim, model: sim-a, cwd: ws}}
  - {id: hasnot, backend: {type: sim, model: sim-b}}
orchestrator:
  coordination: {enable_memory_filesystem_mode: true, use_skills: true}
`), 0o644))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "agent hasnot has no workspace (cwd), so it gets no filesystem memory or skills") ||
		strings.Contains(stderr.String(), "agent has has no workspace") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	ws := filepath.Join(work, ".massgen", "workspaces")
	m, _ := filepath.Glob(filepath.Join(ws, "*", "has", "memory", "long_term"))
	if len(m) != 1 || out.Status != "completed" {
		t.Errorf("status %s; memory/long_term of agent has: %v", out.Status, m)
	}
}
