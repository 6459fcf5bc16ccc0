package app

import (
	"context"
	"fmt"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/llmsim"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// cliBin is where tests/cli-agents installs the pinned CLIs (npm ci).
const cliBin = "../../tests/cli-agents/node_modules/.bin"

// cliPath is clitest.PATH: the pinned CLIs, and no package fetchers.
func cliPath(t *testing.T, types ...string) string { return clitest.PATH(t, types...) }

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
	out, err := Execute(t.Context(), env, Request{Question: "Write proof.txt, then answer: what is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 240}})
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

// cliProcesses are the processes of this test's CLI agents whose homes
// begin with prefix (the bubblewrap that runs one names it in its
// command line; the CLI has it as HOME).
func cliProcesses(prefix string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f)); err == nil && strings.Contains(string(b), prefix) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// A CLI agent mid-turn is stopped the moment another agent's answer lands
// (restart_policy: restart): the CLI and every process it started are
// gone while the run goes on, and none is left when it ends. The other
// agent's simulator holds its second answer until the test has seen
// Claude Code's second turn hang, whatever the machine's speed.
func TestCLIAgentInterruptedByANewAnswerLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coding-agent CLI")
	}
	t.Setenv("PATH", cliPath(t, "claude_code"))
	srv, url := simtest.Start(t, `models:
  cc-slow:
    steps:
      - answer: first answer from claude
      - fault: hang
`)
	api := llmsim.New(simtest.Scenario(t, `models:
  api-late:
    steps:
      - answer: the api agent's first answer
      - answer: the api agent's second answer, which lands while claude's second turn hangs
`))
	gate := make(chan struct{})
	var apiRequests atomic.Int32
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && apiRequests.Add(1) > 1 {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		api.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(apiSrv.Close)
	work := t.TempDir()
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`agents:
  - id: cc
    backend: {type: claude_code, model: cc-slow}
  - id: api
    backend: {type: chatcompletion, model: api-late, base_url: %q}
`, apiSrv.URL+"/v1")), 0o644))
	vars := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "MASSGEN_CLAUDE_CODE_BASE_URL": url}
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: work}
	type result struct {
		out *Outcome
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 300}, Logging: Logging{NoLogs: true}})
		done <- result{out, err, time.Now()}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	hanging := func(rs []llmsim.Record) bool {
		return slices.ContainsFunc(rs, func(r llmsim.Record) bool { return r.Model == "cc-slow" && r.Step == "fault:hang" })
	}
	if err := srv.WaitFor(ctx, hanging); err != nil {
		close(gate)
		t.Fatalf("claude's second turn never reached the simulator: %v", err)
	}
	prefix := fmt.Sprintf("%s%d-cc-", cliHomePrefix, os.Getpid())
	turn := cliProcesses(prefix)
	if len(turn) == 0 {
		close(gate)
		t.Fatal("no process of claude's turn found")
	}
	released := time.Now()
	close(gate) // the api agent's answer lands
	var gone time.Time
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		alive := slices.DeleteFunc(slices.Clone(turn), func(pid int) bool { return !processAlive(pid) || zombie(pid) })
		if len(alive) == 0 {
			gone = time.Now()
			break
		}
	}
	if gone.IsZero() {
		t.Fatalf("processes %v of claude's interrupted turn are still there", turn)
	}
	r := <-done
	if r.err != nil || r.out.Status != "completed" {
		t.Fatalf("run: %v, %+v", r.err, r.out)
	}
	if !gone.Before(r.at) {
		t.Errorf("claude's turn ended only with the run")
	}
	if left := cliProcesses(prefix); len(left) > 0 {
		t.Errorf("processes %v of the CLI agent are left after the run", left)
	}
	t.Logf("claude's turn (%d processes) gone %v after the other answer was released, %v before the run ended",
		len(turn), gone.Sub(released).Round(time.Millisecond), r.at.Sub(gone).Round(time.Millisecond))
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// The homes of CLI agents whose massgen is gone (killed with SIGKILL)
// are removed by the next run; a live process's are kept.
func TestStaleCLIHomesAreSwept(t *testing.T) {
	dead := exec.Command("true")
	must(t, dead.Run())
	stale := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-a-x1", cliHomePrefix, dead.Process.Pid))
	live := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-a-x2", cliHomePrefix, os.Getppid()))
	for _, d := range []string{stale, live} {
		must(t, os.MkdirAll(filepath.Join(d, ".claude"), 0o700))
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	sweepCLIHomes()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the home of a gone massgen is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the home of a live one was removed: %v", err)
	}
}

// A CLI agent's custom tools reach its CLI over MCP (massgen_tools): Claude
// Code calls a command tool of the config by its MCP name, and the tool's
// output comes back to its model.
func TestCLIAgentCallsItsCustomToolOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coding-agent CLI")
	}
	t.Setenv("PATH", cliPath(t, "claude_code"))
	srv, url := simtest.Start(t, `models:
  cc-tools:
    steps:
      - calls:
          - {name: mcp__massgen_tools__custom_tool__shout, arguments: '{"text":"hello"}'}
      - answer: the tool said what it said
        expect_results:
          - {name: mcp__massgen_tools__custom_tool__shout, contains: "HELLO FROM THE TOOL"}
`)
	work := t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "shout.sh"), []byte("#!/bin/sh\necho 'HELLO FROM THE TOOL'\n"), 0o755))
	cfg := filepath.Join(work, "team.yaml")
	must(t, os.WriteFile(cfg, []byte(`agents:
  - id: cc
    backend:
      type: claude_code
      model: cc-tools
      custom_tools:
        - name: shout
          type: command
          command: ./shout.sh
          description: Shout the text.
          parameters: {type: object, properties: {text: {type: string}}, required: [text]}
`), 0o644))
	vars := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "MASSGEN_CLAUDE_CODE_BASE_URL": url}
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Shout hello.", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 180}, Logging: Logging{NoLogs: true}})
	if err != nil || out.Status != "completed" {
		t.Fatalf("run: %v %+v", err, out)
	}
	var offered, checked bool
	for _, r := range srv.Requests() {
		offered = offered || slices.Contains(r.Tools, "mcp__massgen_tools__custom_tool__shout")
		checked = checked || r.Model == "cc-tools" && r.Step == "answer" && r.Outcome != llmsim.OutcomeRejected
	}
	if !offered || !checked {
		t.Errorf("tool offered %v; the answer after the tool's result accepted %v; records %+v", offered, checked, srv.Requests())
	}
}
