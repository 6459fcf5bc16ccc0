package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/tool/mcp"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// mcpAttacks are the security attempts of TestMCPServerFilesystemUnderTheSameRules,
// made through @modelcontextprotocol/server-filesystem given the whole
// file system ("/") as its allowed directory: its own checks let all of
// them through, so each refusal is massgen's (the guard before the call,
// bubblewrap around the server). %[1]s outside dir, %[2]s project (a write
// context path), %[3]s agent b's live workspace, %[4]s the snapshot store.
var mcpAttacks = []string{
	`{name: mcp__fs__write_file, arguments: '{"path": "../escape.txt", "content": "x"}'}`,                                   // `..`
	`{name: mcp__fs__write_file, arguments: '{"path": "%[1]s/abs.txt", "content": "x"}'}`,                                   // absolute path
	`{name: mcp__fs__write_file, arguments: '{"path": "filelink", "content": "x"}'}`,                                        // planted file symlink
	`{name: mcp__fs__write_file, arguments: '{"path": "dirlink/via-dir.txt", "content": "x"}'}`,                             // planted directory symlink
	`{name: mcp__fs__edit_file, arguments: '{"path": "%[2]s/main.go", "edits": [{"oldText": "package", "newText": "x"}]}'}`, // write context path before the presentation
	`{name: mcp__fs__create_directory, arguments: '{"path": "%[2]s/newdir"}'}`,                                              // the same, a directory
	`{name: mcp__fs__move_file, arguments: '{"source": "mine.txt", "destination": "%[1]s/moved.txt"}'}`,                     // move out of the workspace
	`{name: mcp__fs__read_text_file, arguments: '{"path": "%[3]s/secret.txt"}'}`,                                            // another agent's live workspace
	`{name: mcp__fs__read_multiple_files, arguments: '{"paths": ["mine.txt", "%[3]s/secret.txt"]}'}`,                        // hidden among allowed ones
	`{name: mcp__fs__list_directory, arguments: '{"path": "%[4]s"}'}`,                                                       // the snapshot store
}

// The same security attempts as the file tools', through a real MCP
// filesystem server: each is refused with the guard's reason and nothing
// changes on disk; the legitimate calls work (the agent's own workspace,
// the write context path in the final presentation), a protected path
// stays refused even then.
func TestMCPServerFilesystemUnderTheSameRules(t *testing.T) {
	fs := npmServer(t, "mcp-server-filesystem")
	fixedRunName(t)
	work := t.TempDir()
	outside := filepath.Join(work, "outside")
	proj := filepath.Join(work, "project")
	for _, d := range []string{outside, proj} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(outside, "target.txt"), []byte("outside original"), 0o644))
	must(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(proj, "secret.env"), []byte("TOKEN=1\n"), 0o644))
	// The workspaces of this run (known in advance), with what an attacker
	// may have planted in its own: symbolic links to outside.
	wsA := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wsB := filepath.Join(work, ".massgen", "workspaces", "run1", "b")
	must(t, os.MkdirAll(wsA, 0o755))
	must(t, os.MkdirAll(wsB, 0o755))
	must(t, os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(wsA, "filelink")))
	must(t, os.Symlink(outside, filepath.Join(wsA, "dirlink")))
	must(t, os.WriteFile(filepath.Join(wsA, "mine.txt"), []byte("mine"), 0o644))
	must(t, os.WriteFile(filepath.Join(wsB, "secret.txt"), []byte("b's secret"), 0o644))
	store := filepath.Join(work, ".massgen", "snapshots", "run1")

	var calls, expects strings.Builder
	for _, a := range mcpAttacks {
		r := strings.NewReplacer("%[1]s", outside, "%[2]s", proj, "%[3]s", wsB, "%[4]s", store)
		fmt.Fprintf(&calls, "                  - %s\n", r.Replace(a))
		expects.WriteString("                  - {contains: \"refused\"}\n")
	}
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: attacker
      cwd: ws
      mcp_servers:
        fs: {command: %[1]q, args: ["/"]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          attacker:
            steps:
              - calls:
%[2]s              - expect_results:
%[3]s                calls:
                  - {name: mcp__fs__write_file, arguments: '{"path": "own.txt", "content": "mine to write"}'}
                  - {name: mcp__fs__read_text_file, arguments: '{"path": "mine.txt"}'}
              - expect_results:
                  - {name: mcp__fs__write_file, contains: "Successfully"}
                  - {name: mcp__fs__read_text_file, contains: "mine"}
                answer: "A tried everything."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: mcp__fs__write_file, arguments: '{"path": "%[4]s/secret.env", "content": "stolen"}'}
                  - {name: mcp__fs__write_file, arguments: '{"path": "%[4]s/NEW.md", "content": "written at presentation"}'}
              - expect_results:
                  - {name: mcp__fs__write_file, contains: "refused"}
                  - {name: mcp__fs__write_file, contains: "Successfully"}
                text: "Presented."
  - id: b
    backend:
      type: sim
      model: victim
      cwd: ws
      scenario:
        defaults: {ttft_ms: 0}
        models:
          victim:
            steps:
              - answer: "B answers."
              - when: coordination
                vote: agent1
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write, protected_paths: [secret.env]}
`, fs, calls.String(), expects.String(), proj)
	before := map[string]wstest.Tree{}
	for _, d := range []string{outside, wsB} {
		before[d] = wstest.Snapshot(t, d)
	}
	projBefore := wstest.Snapshot(t, proj)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Try.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Presented." {
		ev, _ := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s\nevents:\n%s", out.Status, out.Winner, out.Final, out.Err, stderr.String(), ev)
	}
	if u := out.Tools["a"]; u.Calls != len(mcpAttacks)+4 || u.Errors != len(mcpAttacks)+1 {
		t.Errorf("tool use %+v: want %d calls, %d of them refused", u, len(mcpAttacks)+4, len(mcpAttacks)+1)
	}
	for d, tree := range before {
		wstest.Unchanged(t, d, tree)
	}
	// The project changed only by the one file written in the presentation.
	must(t, os.Remove(filepath.Join(proj, "NEW.md")))
	wstest.Unchanged(t, proj, projBefore)
	if b, err := os.ReadFile(filepath.Join(wsA, "own.txt")); err != nil || string(b) != "mine to write" {
		t.Errorf("own.txt: %q %v", b, err)
	}
	for _, p := range []string{filepath.Join(work, "escape.txt"), filepath.Join(work, ".massgen", "workspaces", "run1", "escape.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	// The winner's server was started again for the presentation (bound
	// with the write context path writable, which it was not before).
	if _, err := os.Stat(filepath.Join(out.LogDir, presentLogDir, "mcp_fs_stderr.log")); err != nil {
		t.Errorf("no log of the server restarted for the presentation: %v", err)
	}
	t.Logf("%d attempts through server-filesystem, all refused, nothing changed", len(mcpAttacks)+1)
}

// Without bubblewrap, the MCP servers of an agent with a workspace are left
// out, saying why, unless the config accepts running them unsandboxed.
func TestMCPServerOfAWorkspaceAgentNeedsTheSandbox(t *testing.T) {
	fs := npmServer(t, "mcp-server-filesystem")
	t.Setenv("PATH", t.TempDir()) // no bwrap to find
	for _, unsandboxed := range []bool{false, true} {
		work := t.TempDir()
		yaml := fmt.Sprintf(`agent:
  id: a
  backend:
    type: sim
    cwd: ws
    command_line_allow_unsandboxed: %t
    mcp_servers:
      fs: {command: %q, args: ["/"]}
`, unsandboxed, fs)
		var stderr strings.Builder
		env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
		out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
		if err != nil {
			t.Fatal(err)
		}
		want := "MCP server fs is left out: an agent with a workspace runs its MCP servers in a sandbox, and bubblewrap (bwrap) is not installed"
		if unsandboxed {
			want = "MCP server fs runs WITHOUT a sandbox (command_line_allow_unsandboxed: true)"
		}
		if out.Status != "completed" || !strings.Contains(stderr.String(), want) {
			t.Errorf("unsandboxed %v: status %s, stderr:\n%s\nwant %q", unsandboxed, out.Status, stderr.String(), want)
		}
	}
}

// A server config two agents share is one process for the team, but two
// when each must see its own files (Owner, as runMCP sets it).
func TestMCPServerOwnerSeparatesProcesses(t *testing.T) {
	pool := mcp.NewPool(mcp.Options{})
	defer pool.Close()
	srv := mcp.Server{Name: "fs", Command: "/bin/true"}
	add := func(owner string) mcp.Handle {
		s := srv
		s.Owner = owner
		h, err := pool.Add(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	shared1, shared2 := add(""), add("")
	a1, b, a2 := add("a"), add("b"), add("a")
	if shared1 != shared2 || a1 != a2 {
		t.Error("the same config for the same owner must be one server")
	}
	if a1 == b || a1 == shared1 {
		t.Error("agents with their own view must not share a server")
	}
}

// shellServer is a minimal MCP stdio server (newline-delimited JSON-RPC)
// with one tool, sh, whose argument "command" is no path to the guard: what
// it can reach is up to the sandbox alone.
const shellServer = `const rl = require('readline').createInterface({input: process.stdin});
const {spawnSync} = require('child_process');
const send = (id, result) => process.stdout.write(JSON.stringify({jsonrpc: '2.0', id, result}) + '\n');
rl.on('line', line => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  switch (m.method) {
  case 'initialize':
    return send(m.id, {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'sh', version: '1'}});
  case 'tools/list':
    return send(m.id, {tools: [{name: 'sh', description: 'run a shell command',
      inputSchema: {type: 'object', properties: {command: {type: 'string'}}, required: ['command']}}]});
  case 'tools/call': {
    const r = spawnSync('/bin/sh', ['-c', m.params.arguments.command], {encoding: 'utf8'});
    return send(m.id, {content: [{type: 'text', text: (r.stdout || '') + (r.stderr || '') + 'EXIT ' + r.status}]});
  }
  default:
    return send(m.id, {});
  }
});
`

// A shell inside the MCP sandbox, reached through an argument the guard
// does not take for a path: a file in a stand-in home (outside the
// workspace, /tmp and the system directories) does not exist for it; a
// write context path is read-only at the kernel while agents coordinate
// (nothing changes on disk); the winner's server, restarted for the final
// presentation, writes it.
func TestMCPSandboxShowsOnlyTheAgentsView(t *testing.T) {
	npmServer(t, "mcp-server-filesystem") // skips or fails (CI) as the other MCP tests when node is missing
	fixedRunName(t)
	wd, err := os.Getwd()
	must(t, err)
	home, err := os.MkdirTemp(wd, "home")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	must(t, os.WriteFile(filepath.Join(home, "id_rsa"), []byte("PRIVATE KEY"), 0o600))
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	// The server's file is outside /tmp too: the sandbox shows its
	// directory (that of an interpreter's file argument) and not its
	// neighbour, the home.
	srvDir, err := os.MkdirTemp(wd, "srv")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(srvDir) })
	must(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644))
	script := filepath.Join(srvDir, "sh.js")
	must(t, os.WriteFile(script, []byte(shellServer), 0o644))
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: prober
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          prober:
            steps:
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "cat %[2]s/id_rsa || ls %[2]s || echo NO_HOME"}'}
                  - {name: mcp__sh__sh, arguments: '{"command": "echo x > %[3]s/main.go"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "NO_HOME"}
                  - {name: mcp__sh__sh, contains: "Read-only file system"}
                answer: "A probed."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "echo presented > %[3]s/NEW.md && echo WROTE"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "WROTE"}
                text: "Presented."
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write}
`, script, home, proj)
	projBefore := wstest.Snapshot(t, proj)
	homeBefore := wstest.Snapshot(t, home)
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Probe.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Presented." {
		ev, _ := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s\nevents:\n%s", out.Status, out.Winner, out.Final, out.Err, stderr.String(), ev)
	}
	wstest.Unchanged(t, home, homeBefore)
	if b, err := os.ReadFile(filepath.Join(proj, "NEW.md")); err != nil || string(b) != "presented\n" {
		t.Errorf("NEW.md written at the presentation: %q %v", b, err)
	}
	must(t, os.Remove(filepath.Join(proj, "NEW.md")))
	wstest.Unchanged(t, proj, projBefore)
}
