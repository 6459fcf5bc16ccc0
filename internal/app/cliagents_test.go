package app

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// cliBin is where tests/cli-agents installs the pinned CLIs (npm ci).
const cliBin = "../../tests/cli-agents/node_modules/.bin"

// cliPrograms are the CLIs' programs by backend type.
var cliPrograms = map[string]string{"claude_code": "claude", "codex": "codex", "gemini_cli": "gemini"}

// cliPath is a PATH with the pinned CLIs first, then the system's
// directories, where npx, uvx and uv fail: the upstream configs' MCP
// servers from the registries must not be fetched by a test. Without the
// CLIs the test skips, or fails in CI.
func cliPath(t *testing.T, types ...string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := exec.LookPath("node"); err != nil {
		needCLIs(t, "node is not on PATH")
	}
	for _, fetcher := range []string{"npx", "uvx", "uv"} {
		must(t, os.WriteFile(filepath.Join(dir, fetcher), []byte("#!/bin/sh\necho \"no package registry in tests\" >&2\nexit 1\n"), 0o755))
	}
	for _, typ := range types {
		p, _ := filepath.Abs(filepath.Join(cliBin, cliPrograms[typ]))
		if _, err := os.Stat(p); err != nil {
			needCLIs(t, fmt.Sprintf("%s is not installed (npm ci in tests/cli-agents)", cliPrograms[typ]))
		}
		must(t, os.Symlink(p, filepath.Join(dir, cliPrograms[typ])))
	}
	return dir + ":/usr/local/bin:/usr/bin:/bin"
}

func needCLIs(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// A team of coding-agent CLIs — Claude Code, Codex and Gemini CLI, the
// vendors' own programs from npm — answers, votes and presents on the simulator,
// with nothing but a key in the environment: each CLI reaches its
// endpoint through MASSGEN_<TYPE>_BASE_URL and calls massgen's workflow
// tools over MCP under its own prefix. A file one of them writes by its
// own tool is in its workspace and nowhere else.
func TestCLIAgentTeamOnTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the coding-agent CLIs")
	}
	types := []string{"claude_code", "codex", "gemini_cli"}
	t.Setenv("PATH", cliPath(t, types...))
	srv, url := simtest.Start(t, `models:
  cc-writer:
    steps:
      - calls:
          - {name: Write, arguments: '{"file_path":"proof.txt","content":"written by claude\n"}'}
`)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(`agents:
  - id: claude
    backend: {type: claude_code, model: cc-writer, cwd: ws_claude}
  - id: codex
    backend: {type: codex, model: codex-sim}
  - id: gemini
    backend: {type: gemini_cli, model: gem-sim}
`), 0o644))
	vars := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "GEMINI_API_KEY": "gem-test", "OPENAI_API_KEY": "sk-test",
		"MASSGEN_CLAUDE_CODE_BASE_URL": url, "MASSGEN_GEMINI_CLI_BASE_URL": url, "MASSGEN_CODEX_BASE_URL": url}
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Write proof.txt, then answer: what is 2+2?", Config: cfg, Timeout: 240})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final == "" {
		t.Fatalf("status %s, final %q, err %v", out.Status, out.Final, out.Err)
	}
	// Each CLI was offered the workflow tools under its prefix and called them.
	called := map[string][]string{}
	for _, r := range srv.Requests() {
		if r.Step == "answer" || r.Step == "vote" {
			called[r.Model] = append(called[r.Model], r.Step)
		}
		if r.Model == "cc-writer" && !slices.Contains(r.Tools, "mcp__massgen__new_answer") && r.Step != "text" {
			t.Errorf("claude's request %s does not offer mcp__massgen__new_answer: %v", r.Step, r.Tools)
		}
		if (r.Model == "gem-sim" || r.Model == "codex-sim") && r.Step != "text" &&
			!slices.ContainsFunc(r.Tools, func(n string) bool { return strings.HasSuffix(n, "_new_answer") }) {
			t.Errorf("%s's request %s does not offer the workflow tools: %v", r.Model, r.Step, r.Tools)
		}
	}
	for _, m := range []string{"cc-writer", "codex-sim", "gem-sim"} {
		if !slices.Contains(called[m], "answer") {
			t.Errorf("%s never answered through the workflow tools: %v", m, called)
		}
	}
	// The file is in claude's workspace of this run, and nowhere else.
	var found []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "proof.txt" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) == 0 {
		t.Fatal("proof.txt was not written")
	}
	for _, p := range found {
		rel, _ := filepath.Rel(work, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		// Its workspace, and what massgen made of it: its snapshots, the
		// others' read-only views of them, the logs.
		switch {
		case parts[0] != ".massgen":
			t.Errorf("proof.txt at %s: outside massgen's directories", rel)
		case parts[1] == "workspaces" && parts[3] != "claude":
			t.Errorf("proof.txt at %s: in another agent's workspace", rel)
		}
	}
	if !slices.ContainsFunc(found, func(p string) bool { return strings.Contains(filepath.ToSlash(p), "/.massgen/workspaces/") }) {
		t.Errorf("proof.txt is not in claude's workspace: %v", found)
	}
	if b, err := os.ReadFile(found[0]); err != nil || string(b) != "written by claude\n" {
		t.Errorf("proof.txt = %q, %v", b, err)
	}
	t.Logf("answer: %s; files: %v; calls: %v", out.Final, found, called)
}
