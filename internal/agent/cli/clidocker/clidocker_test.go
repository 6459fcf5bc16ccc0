package clidocker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/clidocker"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/agent/cli/codex"
	_ "github.com/massgen/massgen/internal/agent/cli/geminicli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	_ "github.com/massgen/massgen/internal/workspace/sandbox/docker"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// These tests run the real Codex CLI (tests/cli-agents) in a real Docker
// container (dockertest's busybox image) against the in-process
// simulator; they skip without an engine or the CLI, and fail in CI.

// userHome is the user's home of the whole test binary (HOME): docker
// mode shares credentials from it and keeps a cache under it that lives
// as long as the process.
var userHome string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "clidocker-home-")
	if err != nil {
		panic(err)
	}
	userHome = dir
	os.Setenv("HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a Codex agent in docker mode, and what it must not touch.
type fixture struct {
	a       *cli.Agent
	r       *sandbox.Runner
	dir     string // the test's directory: ws, home, outside
	outside string // a host directory the container does not see
	cred    string // the user's shared credential file (claude_config)
	canary  string // its content
}

func setup(t testing.TB, base, model, outside string) *fixture {
	return setupCLI(t, "codex", base, model, outside)
}

// setupCLI is setup for the CLI of backend type typ.
func setupCLI(t testing.TB, typ, base, model, outside string) *fixture {
	t.Helper()
	image := dockertest.Image(t)
	f := &fixture{dir: t.TempDir(), outside: outside}
	// The user's home: a Claude login shared by claude_config, and a
	// Codex login (codex_config) that must not replace massgen's
	// CODEX_HOME.
	user := userHome
	var b [8]byte
	rand.Read(b[:])
	f.canary = "massgen-canary-" + hex.EncodeToString(b[:])
	f.cred = filepath.Join(user, ".claude", ".credentials.json")
	for p, body := range map[string]string{f.cred: `{"token":"` + f.canary + `"}`, filepath.Join(user, ".codex", "auth.json"): `{"k":"` + f.canary + `"}`} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws, home := filepath.Join(f.dir, "ws"), filepath.Join(f.dir, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g, err := workspace.New(workspace.Policy{Agent: "cx", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	f.r, err = sandbox.New(g, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: image,
		Credentials: sandbox.Credentials{Files: []string{".claude", ".codex"}}}})
	if err != nil || f.r.Disabled() != nil {
		t.Fatalf("docker mode: %v %v", err, f.r.Disabled())
	}
	t.Cleanup(f.r.Close)
	pc, ok := f.r.Docker().(sandbox.ProgramContainer)
	if !ok {
		t.Fatal("docker mode's container cannot run a program")
	}
	v, _ := cli.Lookup(typ)
	f.a = &cli.Agent{ID: "cx", Vendor: v, Path: clitest.Program(t, typ), Model: model, BaseURL: base, APIKey: "sim-key",
		Workdir: ws, Home: home}
	if err := clidocker.InContainer(f.a.Vendor, f.a.Path); err != nil {
		t.Fatalf("the %s CLI cannot run in the container: %v", typ, err)
	}
	clidocker.Attach(f.a, clidocker.Options{Container: pc})
	t.Cleanup(func() { _ = f.a.Close() })
	return f
}

func coordinate(question string) agent.Task {
	return agent.Task{Kind: agent.TaskCoordinate, Turn: 1, System: "You are agent cx of a team.", User: "Question: " + question,
		Question: question}
}

// answered checks that a turn ended without a failure, its one proposal
// the new answer want.
func answered(t *testing.T, sim *llmsim.Server, outs []agent.Outcome, done agent.Done, want string) {
	t.Helper()
	if done.Failure != nil {
		t.Fatalf("failure: %+v (requests %d)", done.Failure, len(sim.Requests()))
	}
	if acts := clitest.Proposals(outs); len(acts) != 1 || acts[0].Kind != coord.ActNewAnswer || acts[0].Content != want {
		t.Fatalf("proposals %+v, want the scripted new_answer", acts)
	}
}

// removed checks that the agent's container is gone.
func (f *fixture) removed(t *testing.T) {
	t.Helper()
	if id := f.r.Docker().ID(); id != "" {
		t.Errorf("container %s still runs", id)
	}
}

// A coordination turn in docker mode: Codex runs in the container (its
// shell is the image's busybox, not the host's), reaches the simulator
// and massgen's workflow server through the relay alone (the container
// has no network), calls new_answer, and the turn ends with usage. The
// shared Claude login is readable under the CLI's home and read-only; a
// write beside the workspace lands nowhere on the host; the Codex login
// does not replace massgen's CODEX_HOME; the credential's content is in
// no file of the workspace or the CLI's home, nor in what the model saw.
func TestCodexAnswersInItsContainer(t *testing.T) {
	cmd := `readlink /bin/sh > where.txt; wc -c < $HOME/.claude/.credentials.json > cred.txt; ` +
		`(echo x >> $HOME/.claude/.credentials.json) 2>/dev/null || echo refused >> cred.txt; ` +
		`ls $HOME/.codex > codexhome.txt; echo escaped > OUTSIDE/escape.txt; wget -q -T 2 -O- http://1.1.1.1/ 2>&1 | head -c 200 > net.txt; echo done`
	outside := t.TempDir()
	sim, base := simtest.Start(t, `
models:
  sim-codex:
    steps:
      - calls:
          - name: exec_command
            arguments: '{"cmd":"`+strings.ReplaceAll(cmd, "OUTSIDE", outside)+`"}'
      - answer: "Checked from the container."
`)
	f := setup(t, base, "sim-codex", outside)
	before := wstest.Snapshot(t, f.outside)
	credBefore, _ := os.ReadFile(f.cred)
	outs, done := clitest.Run(t, clitest.Timeout(t, 90*time.Second), f.a, coordinate("Where do you run?"))
	answered(t, sim, outs, done, "Checked from the container.")
	if done.Usage.InputTokens == 0 {
		t.Errorf("usage %+v", done.Usage)
	}
	called := slices.ContainsFunc(sim.Requests(), func(r llmsim.Record) bool { return slices.Contains(r.Tools, "mcp__massgen__new_answer") })
	if !called {
		t.Errorf("the workflow tool was never offered through the relay")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(f.a.Workdir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return string(b)
	}
	if got := read("where.txt"); got != "busybox\n" {
		t.Errorf("/bin/sh is %q: the command did not run in the busybox container", got)
	}
	if got, want := read("cred.txt"), strconv.Itoa(len(credBefore))+"\nrefused\n"; got != want {
		t.Errorf("cred.txt %q, want %q: the shared login readable and read-only", got, want)
	}
	if got := read("codexhome.txt"); !strings.Contains(got, "config.toml") || strings.Contains(got, "auth.json") {
		t.Errorf("~/.codex in the container holds %q: massgen's CODEX_HOME, not the user's login", got)
	}
	if got := read("net.txt"); got != "" && !strings.Contains(got, "nreachable") && !strings.Contains(got, "bad address") &&
		!strings.Contains(got, "timed out") {
		t.Errorf("a request to the internet from the container got %q", got)
	}
	if credAfter, _ := os.ReadFile(f.cred); !bytes.Equal(credAfter, credBefore) {
		t.Errorf("the shared credential changed: %q", credAfter)
	}
	wstest.Unchanged(t, f.outside, before)
	for _, root := range []string{f.a.Workdir, f.a.Home} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(f.canary)) {
				t.Errorf("the credential's content was copied into %s", p)
			}
			return nil
		})
	}
	for _, r := range sim.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, f.canary) {
				t.Errorf("the credential's content reached the model")
			}
		}
	}
	f.removed(t)
}

// Gemini CLI, a Node program, runs in the container by this machine's
// node (the busybox image has none): it reaches the simulator and the
// workflow server through the relay, writes a file by its own tool into
// the workspace, and answers; the host's node runs nowhere but in the
// container, and nothing is written beside the workspace.
func TestGeminiCLIAnswersInItsContainer(t *testing.T) {
	sim, base := simtest.Start(t, `
models:
  sim-gemini:
    steps:
      - calls:
          - {name: write_file, arguments: '{"file_path":"notes/hello.txt","content":"written in the container"}'}
      - expect_results:
          - {name: write_file}
        answer: "I wrote notes/hello.txt."
`)
	f := setupCLI(t, "gemini_cli", base, "sim-gemini", t.TempDir())
	before := wstest.Snapshot(t, filepath.Dir(f.a.Workdir))
	outs, done := clitest.Run(t, clitest.Timeout(t, 120*time.Second), f.a, coordinate("Write a note."))
	answered(t, sim, outs, done, "I wrote notes/hello.txt.")
	if b, err := os.ReadFile(filepath.Join(f.a.Workdir, "notes", "hello.txt")); err != nil || string(b) != "written in the container" {
		t.Errorf("notes/hello.txt: %q, %v", b, err)
	}
	if !slices.ContainsFunc(sim.Requests(), func(r llmsim.Record) bool {
		return slices.ContainsFunc(r.Tools, func(n string) bool { return strings.HasSuffix(n, "_new_answer") })
	}) {
		t.Errorf("the workflow tools were never offered through the relay")
	}
	// Beside the workspace: only what was there, its home aside.
	after := wstest.Snapshot(t, filepath.Dir(f.a.Workdir))
	for _, line := range after {
		if !slices.Contains(before, line) && !strings.Contains(line, "home") && !strings.Contains(line, "ws") {
			t.Errorf("written beside the workspace: %s", line)
		}
	}
	f.removed(t)
}

// Cancelling a turn in docker mode ends Run at once and leaves nothing
// running: the CLI and the command it runs (a process of the container,
// not of the shim's process group) go with the container.
func TestCancelKillsEverythingInTheContainer(t *testing.T) {
	sim, base := simtest.Start(t, `
models:
  sim-codex:
    steps:
      - calls:
          - name: exec_command
            arguments: '{"cmd":"sleep 6007"}'
      - answer: "Slept."
`)
	f := setup(t, base, "sim-codex", t.TempDir())
	ctx, cancel := context.WithCancel(clitest.Timeout(t, 90*time.Second))
	ended := make(chan agent.Done, 1)
	go func() {
		_, done := clitest.Run(t, ctx, f.a, coordinate("Wait."))
		ended <- done
	}()
	called := func(recs []llmsim.Record) bool { return len(recs) >= 1 && recs[0].Outcome == llmsim.OutcomeCompleted }
	wctx, stopWait := context.WithCancel(clitest.Timeout(t, 60*time.Second))
	early := make(chan agent.Done, 1)
	go func() {
		select {
		case d := <-ended:
			early <- d
			stopWait()
		case <-wctx.Done():
		}
	}()
	if err := sim.WaitFor(wctx, called); err != nil {
		cancel()
		select {
		case d := <-early:
			t.Fatalf("the turn ended before the command ran: %+v", d.Failure)
		default:
		}
		t.Fatalf("the model was never asked: %v", err)
	}
	stopWait()
	select {
	case d := <-early:
		ended <- d // it ended by itself: the checks below say what is wrong
	default:
	}
	var procs []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if procs = clitest.AgentProcesses(t, f.a, "sleep 6007"); slices.ContainsFunc(procs, func(p string) bool { return strings.Contains(p, "sleep 6007") }) {
			break
		}
	}
	if !slices.ContainsFunc(procs, func(p string) bool { return strings.Contains(p, "sleep 6007") }) {
		cancel()
		t.Fatalf("the background sleep is not running (%v): the check below would prove nothing", procs)
	}
	clitest.Cancel(t, cancel, ended)
	if procs := clitest.AgentProcesses(t, f.a, "sleep 6007"); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
	f.removed(t)
}

// BenchmarkCodexTurnDockerVsBubblewrap plays the same coordination turn
// (Codex answers on the simulator) with the CLI in its agent's container
// and under bubblewrap on this machine, interleaved, and reports each
// turn's wall time and their ratio: what docker mode adds to a turn (a
// container made and removed per task, the engine's exec, the relay).
func BenchmarkCodexTurnDockerVsBubblewrap(b *testing.B) {
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		b.Skipf("no bubblewrap: %v", err)
	}
	_, base := simtest.Start(b, "")
	docker := setup(b, base, "sim-codex", b.TempDir())
	dir := b.TempDir()
	local := &cli.Agent{ID: "cx", Vendor: codex.Vendor{}, Path: docker.a.Path, Model: "sim-codex", BaseURL: base, APIKey: "sim-key",
		Workdir: filepath.Join(dir, "ws"), Home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(local.Workdir, 0o755); err != nil {
		b.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: "cx", Workspace: local.Workdir})
	if err != nil {
		b.Fatal(err)
	}
	local.Network = clitest.Network(bwrap, g, local.Home)
	b.Cleanup(func() { _ = local.Close() })
	turn := func(a *cli.Agent) time.Duration {
		start := time.Now()
		_, done := clitest.Run(b, clitest.Timeout(b, 120*time.Second), a, coordinate("What is the capital of France?"))
		if done.Failure != nil {
			b.Fatalf("failure: %+v", done.Failure)
		}
		return time.Since(start)
	}
	turn(docker.a) // the image and the caches, once
	turn(local)
	var inDocker, underBwrap time.Duration
	b.ResetTimer()
	for range b.N {
		inDocker += turn(docker.a)
		underBwrap += turn(local)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(inDocker.Seconds()*1000/n, "docker-ms/turn")
	b.ReportMetric(underBwrap.Seconds()*1000/n, "bwrap-ms/turn")
	b.ReportMetric(inDocker.Seconds()/underBwrap.Seconds(), "docker/bwrap")
}
