package cli

import (
	"strings"
	"testing"
)

// `@notes.txt` in a question shares that file (and only it) with the
// agents that have a workspace; --no-parse-at-references does not.
func TestAtReferenceSharesAFile(t *testing.T) {
	cfg := `agent:
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
	files := map[string]string{"c.yaml": cfg, "notes.txt": "the plan", "other.txt": "private"}
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
