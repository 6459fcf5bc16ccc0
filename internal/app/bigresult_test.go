package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18: an oversized tool result of an agent with a workspace reaches
// the model cut, with a note naming the file in the workspace that keeps
// it whole; the run goes on.
func TestAnOversizedResultIsKeptWholeInTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.py"), []byte(`def big(n: int) -> str:
    """Return n bytes.

    Args:
        n: how many
    """
    return ("x" * 99 + "\n") * (n // 100)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `agent:
  id: a
  backend:
    type: sim
    model: m
    cwd: ws
    custom_tools:
      - {name: big, path: big.py, function: big}
    scenario:
      models:
        m:
          steps:
            - calls:
                - {name: custom_tool__big, arguments: '{"n": 600000}'}
            - expect_results:
                - {name: custom_tool__big, contains: "KiB of 585.9 KiB; 459.0 KiB cut. To see the rest, read the whole result from "}
              answer: "done"
            - vote: a
`
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{Config: filepath.Join(dir, "c.yaml")}, Overrides: Overrides{Timeout: 120}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	// The simulated model answers "done" only when the result it got
	// matched every expectation (it fails the turn otherwise).
	if out.Status != "completed" || !strings.Contains(out.Final, "done") || len(out.Failures) > 0 {
		t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr.String())
	}
	kept, _ := filepath.Glob(filepath.Join(dir, ".massgen", "workspaces", "*", "a", "tool_results", "custom_tool__big-*.txt"))
	if len(kept) != 1 {
		t.Fatalf("kept results: %v", kept)
	}
	if data, err := os.ReadFile(kept[0]); err != nil || len(data) != 600000 || !strings.HasPrefix(string(data), "xxx") {
		t.Errorf("kept file has %d bytes (%v), want the whole 600000", len(data), err)
	}
}
