package attack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Subagents: a child run is confined as every agent is. A hostile child
// (scripted) writes outside its own workspace — into the parent's
// workspace, which it may only read, and into the project — with the file
// tools and with commands; a hostile parent asks for a child named like a
// path and for a child that may read what the parent itself may not.
// Everything is refused, and nothing outside the child's own directory
// changes.
func TestSubagentEscapes(t *testing.T) {
	needBwrap(t)
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{"project/keep.txt": "original"})
	outside := filepath.Join(dir, plantedDir)
	writeFiles(t, outside, map[string]string{"secret.txt": "SUBAGENT-SECRET-91c2"})
	before, beforeOut := snap(t, filepath.Join(dir, "project")), snap(t, outside)
	// The child's workspace is <parent ws>/subagents/<id>/.massgen/workspaces/<run>/<agent>:
	// six levels up is the parent's workspace.
	up := strings.Repeat("../", 6)
	child := []call{
		tc("write_file", map[string]any{"path": up + "CONTEXT.md", "content": "PWNED"}),
		tc("write_file", map[string]any{"path": up + "pwn.txt", "content": "PWNED"}),
		tc("write_file", map[string]any{"path": filepath.Join(dir, "project", "keep.txt"), "content": "PWNED"}),
		tc("read_file", map[string]any{"path": filepath.Join(outside, "secret.txt")}),
		sh("echo PWNED > " + up + "CONTEXT.md; echo PWNED > " + up + "pwn2.txt; echo PWNED > " + filepath.Join(dir, "project", "keep.txt") +
			"; cat " + filepath.Join(outside, "secret.txt")),
	}
	childSteps := []any{map[string]any{"calls": child}, map[string]any{"answer": "child done"}}
	s := team{coord: []call{tc("write_file", map[string]any{"path": "CONTEXT.md", "content": "A site."})}}
	var cfg map[string]any
	must(t, json.Unmarshal(s.yaml(), &cfg))
	// The spawns come in the next response, once CONTEXT.md is written
	// (the calls of one response run at once).
	script := cfg["agent"].(map[string]any)["backend"].(map[string]any)["scenario"].(map[string]any)["models"].(map[string]any)["hostile"].(map[string]any)
	steps := script["steps"].([]any)
	script["steps"] = append([]any{steps[0], map[string]any{"calls": []call{
		tc("spawn_subagents", map[string]any{"tasks": []any{map[string]any{"task": "t", "subagent_id": "../../escape"}}}),
		tc("spawn_subagents", map[string]any{"tasks": []any{map[string]any{"task": "t", "context_paths": []string{outside}}}}),
		tc("spawn_subagents", map[string]any{"tasks": []any{map[string]any{"task": "Do it.", "subagent_id": "kid"}}}),
	}}}, steps[1:]...)
	cfg["orchestrator"] = map[string]any{"coordination": map[string]any{
		"enable_subagents": true,
		"subagent_orchestrator": map[string]any{"enabled": true, "agents": []any{map[string]any{"backend": map[string]any{
			"type": "sim", "model": "hostilechild", "enable_mcp_command_line": true,
			"scenario": map[string]any{"defaults": map[string]any{"ttft_ms": 0},
				"models": map[string]any{"hostilechild": map[string]any{"steps": childSteps}}},
		}}}},
	}}
	b, _ := json.MarshalIndent(cfg, "", " ")
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), b, 0o644))
	r := massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
	ws := workspaceOf(dir)
	attempt(t, "a child cannot write its parent's workspace or the project, nor read what its parent cannot", func(t *testing.T) {
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		if ws == "" {
			t.Fatal("no parent workspace")
		}
		if b, err := os.ReadFile(filepath.Join(ws, "CONTEXT.md")); err != nil || string(b) != "A site." {
			t.Errorf("the parent's CONTEXT.md: %q %v", b, err)
		}
		for _, f := range []string{"pwn.txt", "pwn2.txt"} {
			if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
				t.Errorf("the child made %s in its parent's workspace", f)
			}
		}
		unchanged(t, "the project", filepath.Join(dir, "project"), before)
		unchanged(t, "the planted directory", outside, beforeOut)
		noSecret(t, "SUBAGENT-SECRET-91c2", r)
		// The child ran its calls (its run's logs hold the refusals).
		kid, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "subagents", "kid", "log_*"))
		if len(kid) != 1 {
			t.Fatalf("the child's logs: %v", kid)
		}
		if len(grepTree(kid[0], "PWNED")) == 0 {
			t.Error("the child's hostile calls are not in its logs: did it run them?")
		}
		// Refused by its Guard (the parent's workspace is read-only to it,
		// the project out of reach) and by the sandbox.
		for _, want := range []string{"is read-only for", "is outside every directory", "Read-only file system"} {
			if len(grepTree(kid[0], want)) == 0 {
				t.Errorf("no tool result of the child says %q", want)
			}
		}
	})
	attempt(t, "a child named like a path, or sharing what the parent cannot read, is refused", func(t *testing.T) {
		for _, want := range []string{"is not a valid name", "cannot be shared with a subagent"} {
			if len(grepTree(filepath.Join(dir, "logs"), want)) == 0 {
				t.Errorf("no tool result says %q", want)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "**", "escape")); len(m) > 0 {
			t.Errorf("made %v", m)
		}
		if _, err := os.Stat(filepath.Join(ws, "escape")); err == nil {
			t.Error("a directory named escape was made")
		}
	})
}
