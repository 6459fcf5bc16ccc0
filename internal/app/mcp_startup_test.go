package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 18: an MCP server that never answers initialize held every agent
// for 121 s. It is given up after its init_timeout; the agent answers
// without its tools, and the run says what it did not do: the warning on
// stderr, the outcome's IgnoredFeatures (the WARNINGS line) and
// status.json's meta.ignored_features.
func TestAServerThatNeverStartsIsLeftOutAndTheRunSaysSo(t *testing.T) {
	dir := t.TempDir()
	cfg := `agent:
  id: a
  backend:
    type: sim
    mcp_servers:
      silent: {command: sh, args: ["-c", "cat >/dev/null"], init_timeout: 0.5}
`
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: dir}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(cfg)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(dir, "logs")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" {
		t.Fatalf("status %s, err %v\n%s", out.Status, out.Err, stderr.String())
	}
	const feature = "mcp_servers.silent (agent a)"
	if !slices.Contains(out.IgnoredFeatures, feature) {
		t.Errorf("IgnoredFeatures = %q, want %q", out.IgnoredFeatures, feature)
	}
	if !strings.Contains(stderr.String(), "agent a: its tools are left out: MCP server silent did not answer within its start-up limit (init_timeout 500ms") {
		t.Errorf("stderr lacks the warning:\n%s", stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out.LogDir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Meta struct {
			IgnoredFeatures []string `json:"ignored_features"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(st.Meta.IgnoredFeatures, feature) {
		t.Errorf("status.json meta.ignored_features = %q, want %q", st.Meta.IgnoredFeatures, feature)
	}
}
