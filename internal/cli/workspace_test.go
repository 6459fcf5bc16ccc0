package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readerConfig is one agent with a workspace that reads ../../../../notes.txt
// (the working directory's notes.txt, from its workspace) and answers
// "Read the plan." only if the read succeeded: the file must be shared.
const readerConfig = `agent:
  backend:
    type: sim
    model: reader
    cwd: ws
    scenario:
      defaults: {ttft_ms: 0}
      models:
        reader:
          steps:
            - calls: [{name: read_file, arguments: '{"path": "../../../../notes.txt"}'}]
            - expect_results: [{name: read_file, contains: "the plan"}]
              answer: "Read the plan."
`

// `@notes.txt` in a question shares that file (and only it) with the
// agents that have a workspace; --no-parse-at-references does not.
func TestAtReferenceSharesAFile(t *testing.T) {
	files := map[string]string{"c.yaml": readerConfig, "notes.txt": "the plan", "other.txt": "private"}
	r := massgen(t, t.Context(), files, nil, "--no-logs", "--config", "c.yaml", "Summarise @notes.txt.")
	if r.code != 0 || !strings.Contains(r.stdout, "Read the plan.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "workspace of the winner: ") {
		t.Errorf("the winner's workspace is not named:\n%s", r.stderr)
	}
	r = massgen(t, t.Context(), files, nil, "--no-logs", "--no-parse-at-references", "--config", "c.yaml", "Summarise @notes.txt.")
	if strings.Contains(r.stdout, "Read the plan.") {
		t.Errorf("the file was shared despite --no-parse-at-references:\n%s", r.stdout)
	}
}

// `@missing.md` is named in a warning, and `@real.txt` with a team without
// workspaces says the file reaches no agent, without naming --cwd-context,
// which the user never gave (issue 22).
func TestAtReferenceWarnings(t *testing.T) {
	files := map[string]string{"c.yaml": "agent: {id: a, backend: {type: sim}}\n", "real.txt": "x"}
	r := massgen(t, t.Context(), files, nil, "--no-logs", "--config", "c.yaml", "Compare @real.txt with @missing.md.")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"warning: @missing.md in the question names no file or directory", "real.txt is shared with no agent"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "--cwd-context") {
		t.Errorf("stderr names --cwd-context, which was not given:\n%s", r.stderr)
	}
}

// In interactive mode, /context shares a path for the rest of the session
// and @path in a question shares it for that question; a path that does
// not exist is refused with why.
func TestInteractiveContextAndAtReferencesShareFiles(t *testing.T) {
	for name, stdin := range map[string]string{
		"/context": "/context missing.txt\n/context notes.txt\nSummarise the notes.\n",
		"@path":    "Summarise @notes.txt.\n",
		// The agent's read of notes.txt is refused: its answer never comes.
		"nothing shared": "Summarise the notes.\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, body := range map[string]string{"c.yaml": readerConfig, "notes.txt": "the plan"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := massgenIn(t, t.Context(), dir, stdin, "--display", "plain", "--config", "c.yaml")
			if name == "nothing shared" {
				if strings.Contains(r.stdout, "Read the plan.") {
					t.Errorf("the file was read without being shared:\n%s", r.stdout)
				}
				return
			}
			if r.code != 0 || !strings.Contains(r.stdout, "Read the plan.") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if name == "/context" && !strings.Contains(r.stderr, "/context missing.txt: no such file or directory") {
				t.Errorf("a missing path is not refused with why:\n%s", r.stderr)
			}
		})
	}
}
