package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// serverPids are the host pids of the node processes whose command line
// holds marker (the sandboxed MCP servers of one agent; bwrap's own
// processes, which carry the same arguments, are not node).
func serverPids(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(argv[0]) == "node" && slices.Contains(argv, marker) && alive(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitFor waits (bounded) until path exists; it fails the test if the run
// ended first or it never appears.
func waitFor(t *testing.T, path string, done <-chan struct{}) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("the run ended before %s appeared", path)
		case <-deadline:
			t.Fatalf("%s never appeared", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// noFailedTurn fails the test if a turn of the run failed: a tool result
// the scenario did not expect fails the turn (the simulator answers 400),
// and the run may still complete on its default policy.
func noFailedTurn(t *testing.T, logDir string) {
	t.Helper()
	ev, err := os.ReadFile(filepath.Join(logDir, "coordination_events.jsonl"))
	must(t, err)
	for _, line := range strings.Split(string(ev), "\n") {
		if strings.Contains(line, `"type":"turn_failed"`) {
			t.Errorf("a turn failed: %s", line)
		}
	}
}

// blockUntil is a shell command for the test's sh server: it says it is
// waiting (file at), then waits (bounded) for the test's go-ahead (file
// until) and echoes word.
func blockUntil(at, until, word string) string {
	return fmt.Sprintf("touch %s; i=0; while [ ! -e %s ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo %s", at, until, word)
}

// When the winner presents, its MCP servers run again with the write
// context paths writable, and the coordination-phase servers stop, the
// winner's and the other agent's alike: while the presentation runs, the
// only server process left is the presenter's new one, which answers. The
// logs of all of them reach the run's log directory, and at the end no
// server is left.
func TestPresentationStopsTheCoordinationPhaseServers(t *testing.T) {
	npmServer(t, "mcp-server-filesystem") // skips or fails (CI) as the other MCP tests when node is missing
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	fixedRunName(t)
	srvDir, script := shellServerScript(t)
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	// Markers unique to this test run, so that no other test's node counts.
	markA, markB := "agent-a-"+filepath.Base(srvDir), "agent-b-"+filepath.Base(srvDir)
	wsA := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wsB := filepath.Join(work, ".massgen", "workspaces", "run1", "b")
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: presenter
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q, %[2]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          presenter:
            steps:
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "%[4]s"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "GO1"}
                answer: "A answers."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "%[5]s"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "GO2"}
                text: "Presented."
  - id: b
    backend:
      type: sim
      model: other
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q, %[3]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          other:
            steps:
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "%[6]s"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "GO1"}
                answer: "B answers."
              - when: coordination
                vote: agent1
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write}
`, script, markA, markB, blockUntil("waiting1", "go1", "GO1"), blockUntil("waiting2", "go2", "GO2"), blockUntil("ready", "go1", "GO1"))
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	done := make(chan struct{})
	var out *Outcome
	var runErr error
	go func() {
		defer close(done)
		out, runErr = Execute(t.Context(), env, Request{Question: "Go.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 300}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	}()
	release := func(dir, name string) { must(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644)) }
	t.Cleanup(func() { // never leave the run waiting, whatever failed
		for _, d := range []string{wsA, wsB} {
			_ = os.WriteFile(filepath.Join(d, "go1"), nil, 0o644)
			_ = os.WriteFile(filepath.Join(d, "go2"), nil, 0o644)
		}
		<-done
	})

	// Coordination: each agent's own server runs, one process each.
	waitFor(t, filepath.Join(wsA, "waiting1"), done)
	waitFor(t, filepath.Join(wsB, "ready"), done)
	coordA, coordB := serverPids(markA), serverPids(markB)
	if len(coordA) != 1 || len(coordB) != 1 {
		t.Fatalf("while coordinating: a's servers %v, b's %v; want one each", coordA, coordB)
	}
	release(wsA, "go1")
	release(wsB, "go1")

	// The presentation: a's tool call runs in its new server, the
	// coordination-phase ones are gone.
	waitFor(t, filepath.Join(wsA, "waiting2"), done)
	allGone(t, "a coordination-phase server during the presentation", coordA[0], coordB[0])
	presA := serverPids(markA)
	if len(presA) != 1 || presA[0] == coordA[0] {
		t.Errorf("during the presentation a's servers are %v, want one new one (the coordination one was %s)", presA, coordA[0])
	}
	if b := serverPids(markB); len(b) != 0 {
		t.Errorf("during the presentation b's servers are %v, want none", b)
	}
	release(wsA, "go2")
	<-done

	if runErr != nil {
		t.Fatal(runErr)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Presented." {
		ev, _ := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s\nevents:\n%s", out.Status, out.Winner, out.Final, out.Err, stderr.String(), ev)
	}
	noFailedTurn(t, out.LogDir)
	if u := out.Tools["a"]; u.Calls != 2 || u.Errors != 0 {
		t.Errorf("a's tool use %+v: want 2 calls that answered", u)
	}
	allGone(t, "after the run", slices.Concat(presA, serverPids(markA), serverPids(markB))...)
	// Each server's stderr log is in the run's logs: a's and b's of the
	// coordination (one name, two files) and a's of the presentation.
	hasLogs(t, out.LogDir, "mcp_sh_stderr.log", "mcp_sh_2_stderr.log", filepath.Join(presentLogDir, "mcp_sh_stderr.log"))
}

// A run that starts again after the presentation (post-evaluation's
// restart): every agent's servers start again for the new attempt, in the
// coordination view, so the presenter's write context path is read-only at
// the kernel again (the presentation's servers, bound with it writable,
// are stopped), and writable once more in the second presentation.
func TestMCPServersStartAgainReadOnlyAfterARestart(t *testing.T) {
	npmServer(t, "mcp-server-filesystem") // skips or fails (CI) as the other MCP tests when node is missing
	fixedRunName(t)
	srvDir, script := shellServerScript(t)
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644))
	markA, markB := "agent-a-"+filepath.Base(srvDir), "agent-b-"+filepath.Base(srvDir)
	// coordinate: the write is refused by the kernel; present: it is not.
	coordinate := fmt.Sprintf(`              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "echo x > %[1]s/main.go"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "Read-only file system"}
                answer: "A answers."
              - when: coordination
                vote: agent1
`, proj)
	present := func(n int) string {
		return fmt.Sprintf(`              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "echo %[2]d >> %[1]s/NEW.md && echo WROTE"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "WROTE"}
                text: "Presented %[2]d."
`, proj, n)
	}
	other := `              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "echo B-HERE"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "B-HERE"}
                answer: "B answers."
              - when: coordination
                vote: agent1
`
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: presenter
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q, %[2]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          presenter:
            steps:
%[4]s%[5]s              - when: evaluation
                restart: "not yet"
%[4]s%[6]s              - when: evaluation
                submit: true
  - id: b
    backend:
      type: sim
      model: other
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q, %[3]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          other:
            steps:
%[7]s%[7]s
ui: {enable_final_presentation: true}
orchestrator:
  coordination: {max_orchestration_restarts: 1}
  context_paths:
    - {path: project, permission: write}
`, script, markA, markB, coordinate, present(1), present(2), other)
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Go.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 300}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Presented 2." {
		ev, _ := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s\nevents:\n%s\n%s", out.Status, out.Winner, out.Final, out.Err, stderr.String(), ev, yaml)
	}
	noFailedTurn(t, out.LogDir)
	if a, b := out.Tools["a"], out.Tools["b"]; a.Calls != 4 || b.Calls != 2 || b.Errors != 0 {
		t.Errorf("tool use: a %+v, want 4 calls; b %+v, want 2 that answered (its server back for the second attempt)", a, b)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "main.go")); err != nil || string(b) != "package main\n" {
		t.Errorf("main.go, read-only in both coordinations: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "NEW.md")); err != nil || string(b) != "1\n2\n" {
		t.Errorf("NEW.md, written in both presentations: %q %v", b, err)
	}
	allGone(t, "after the run", slices.Concat(serverPids(markA), serverPids(markB))...)
	// Both presentations' logs are kept.
	hasLogs(t, out.LogDir, filepath.Join(presentLogDir, "mcp_sh_stderr.log"), filepath.Join(presentLogDir+"_2", "mcp_sh_stderr.log"))
}

// The presentation of an agent with no MCP server of its own stops the
// others' coordination-phase servers too.
func TestPresenterWithoutServersStopsTheOthers(t *testing.T) {
	npmServer(t, "mcp-server-filesystem") // skips or fails (CI) as the other MCP tests when node is missing
	fixedRunName(t)
	srvDir, script := shellServerScript(t)
	work := t.TempDir()
	markB := "agent-b-" + filepath.Base(srvDir)
	wsA := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wsB := filepath.Join(work, ".massgen", "workspaces", "run1", "b")
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: presenter
      cwd: ws
      enable_mcp_command_line: true
      scenario:
        defaults: {ttft_ms: 0}
        models:
          presenter:
            steps:
              - answer: "A answers."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: execute_command, arguments: '{"command": "%[3]s"}'}
              - expect_results:
                  - {name: execute_command, contains: "GO2"}
                text: "Presented."
  - id: b
    backend:
      type: sim
      model: other
      cwd: ws
      mcp_servers:
        sh: {command: node, args: [%[1]q, %[2]q]}
      scenario:
        defaults: {ttft_ms: 0}
        models:
          other:
            steps:
              - calls:
                  - {name: mcp__sh__sh, arguments: '{"command": "%[4]s"}'}
              - expect_results:
                  - {name: mcp__sh__sh, contains: "B-HERE"}
                answer: "B answers."
              - when: coordination
                vote: agent1
ui: {enable_final_presentation: true}
`, script, markB, blockUntil("waiting2", "go2", "GO2"), blockUntil("ready", "go1", "B-HERE"))
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	done := make(chan struct{})
	var out *Outcome
	var runErr error
	go func() {
		defer close(done)
		out, runErr = Execute(t.Context(), env, Request{Question: "Go.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 300}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	}()
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(wsB, "go1"), nil, 0o644)
		_ = os.WriteFile(filepath.Join(wsA, "go2"), nil, 0o644)
		<-done
	})
	// b's call holds its turn (and so the presentation) until its server
	// has been seen.
	waitFor(t, filepath.Join(wsB, "ready"), done)
	coordB := serverPids(markB)
	must(t, os.WriteFile(filepath.Join(wsB, "go1"), nil, 0o644))
	if len(coordB) != 1 {
		t.Fatalf("while coordinating b's servers are %v, want one", coordB)
	}
	waitFor(t, filepath.Join(wsA, "waiting2"), done)
	if err := gone(coordB[0]); err != nil {
		t.Errorf("b's server during a's presentation: %v", err)
	}
	select {
	case <-done:
		t.Fatal("the run ended before the presentation's command was released")
	default:
	}
	must(t, os.WriteFile(filepath.Join(wsA, "go2"), nil, 0o644))
	<-done
	if runErr != nil {
		t.Fatal(runErr)
	}
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Presented." {
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s", out.Status, out.Winner, out.Final, out.Err, stderr.String())
	}
	noFailedTurn(t, out.LogDir)
}

// shellServerScript writes the shell MCP server (shellServer) into a new
// directory outside /tmp, which the sandbox shows as the server's own
// tree, and returns the directory and the script.
func shellServerScript(t *testing.T) (dir, script string) {
	t.Helper()
	wd, err := os.Getwd()
	must(t, err)
	dir, err = os.MkdirTemp(wd, "srv")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	script = filepath.Join(dir, "sh.js")
	must(t, os.WriteFile(script, []byte(shellServer), 0o644))
	return dir, script
}

// allGone checks that each process has ended (when says when it should).
func allGone(t *testing.T, when string, pids ...string) {
	t.Helper()
	for _, pid := range pids {
		if err := gone(pid); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
}

// hasLogs checks that each log file is in the run's log directory.
func hasLogs(t *testing.T, logDir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(logDir, n)); err != nil {
			t.Errorf("log %s: %v", n, err)
		}
	}
}
