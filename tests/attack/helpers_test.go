// Package attack is massgen's attack suite (issue 17): a scripted hostile
// model driving every tool path of a real massgen binary, a hostile MCP
// server, and a hostile local user of `massgen mcp --http` and `massgen
// serve`. Every attempt is one named subtest directly under its class's
// test, written to assert the SAFE outcome: the attempt is refused AND
// nothing changed on disk AND no secret leaked (the disk is compared
// before and after; the files, stdout and stderr are grepped for the
// canary secrets this process puts in its environment).
//
//	go test -race -count=1 ./tests/attack/
//	go test -count=1 -v ./tests/attack/ | grep -c '^    --- PASS'
package attack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace/wstest"
)

var (
	bin      string // the massgen binary, built once
	toolsDir string // the binary's directory, also holding the hostile MCP server
	// canary is in every secret this process holds: grep for it.
	canary    string
	canaryEnv map[string]string
)

// The attempts, as their subtests end.
var (
	tallyMu sync.Mutex
	tally   int
	through []string
	skipped []string
)

func TestMain(m *testing.M) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	canary = "CANARY" + hex.EncodeToString(b)
	canaryEnv = map[string]string{
		"OPENAI_API_KEY":        "sk-" + canary + "-openai",
		"ANTHROPIC_API_KEY":     "sk-ant-" + canary + "-anthropic",
		"GEMINI_API_KEY":        "AIza" + canary + "gemini",
		"GITHUB_TOKEN":          "ghp_" + canary,
		"AWS_SECRET_ACCESS_KEY": canary + "/aws",
		"MASSGEN_ATTACK_SECRET": canary,
	}
	for k, v := range canaryEnv {
		os.Setenv(k, v)
	}
	dir, err := os.MkdirTemp("", "massgen-attack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	toolsDir = dir
	bin = filepath.Join(dir, "massgen")
	build := exec.Command("go", "build", "-o", bin, "github.com/massgen/massgen/cmd/massgen")
	if prebuilt := os.Getenv("MASSGEN_ATTACK_BIN"); prebuilt != "" {
		// A binary built elsewhere (e.g. of another commit).
		build = exec.Command("cp", prebuilt, bin)
	}
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building massgen: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	_ = os.MkdirAll(filepath.Join(dir, "srv"), 0o755)
	if err := os.WriteFile(evilMCPPath(), []byte(evilMCP), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	tallyMu.Lock()
	fmt.Printf("attack suite: %d attempts, %d through", tally, len(through))
	if len(skipped) > 0 {
		fmt.Printf(", %d skipped", len(skipped))
	}
	fmt.Println()
	for _, n := range through {
		fmt.Println("  through:", n)
	}
	for _, n := range skipped {
		fmt.Println("  skipped:", n)
	}
	tallyMu.Unlock()
	os.RemoveAll(dir)
	os.Exit(code)
}

// attempt runs one attack as a named subtest of t, counted in the summary.
func attempt(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Cleanup(func() {
			tallyMu.Lock()
			defer tallyMu.Unlock()
			tally++
			switch {
			case t.Failed():
				through = append(through, t.Name())
			case t.Skipped():
				skipped = append(skipped, t.Name())
			}
		})
		f(t)
	})
}

// needBwrap skips without a working bubblewrap, except in CI (the
// convention of internal/workspace/sandbox's tests).
func needBwrap(t testing.TB) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("bwrap"); err != nil {
		why = "bwrap is not installed (apt-get install bubblewrap)"
	} else if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-all", "true").CombinedOutput(); err != nil {
		why = fmt.Sprintf("bwrap cannot create a sandbox here: %v: %s", err, out)
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why + "; .ci/run installs bubblewrap and allows user namespaces")
	}
	t.Skip(why)
}

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed")
		}
		t.Skip("python3 is not installed")
	}
}

// slots bounds the massgen processes running at once (2 shared cores).
var slots = make(chan struct{}, 2)

type result struct {
	dir            string
	code           int
	stdout, stderr string
	dur            time.Duration
	maxRSSKiB      int64
	timedOut       bool
}

// runOpts is how a massgen process is started.
type runOpts struct {
	env     []string      // added to this process's environment (canaries included)
	stdin   string        // "" = /dev/null
	timeout time.Duration // default 90 s
	// started, when set, is called with the process once it runs.
	started func(p *os.Process)
}

// massgen runs the binary in dir with args.
func massgen(t testing.TB, dir string, o runOpts, args ...string) result {
	t.Helper()
	slots <- struct{}{}
	defer func() { <-slots }()
	if o.timeout == 0 {
		o.timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), o.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if o.started != nil {
		o.started(cmd.Process)
	}
	// The peak memory of massgen itself: wait4's ru_maxrss would not do,
	// since a child started by vfork inherits its parent's high-water mark
	// at exec (the test binary's, large under -race). VmHWM is the new
	// image's own and only grows, so the last reading before exit holds
	// the peak, but for its final millisecond.
	hwm := make(chan int64)
	stop := make(chan struct{})
	go func() {
		var peak int64
		for {
			if v := vmHWM(cmd.Process.Pid); v > peak {
				peak = v
			}
			select {
			case <-stop:
				hwm <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	r := result{dir: dir, stdout: stdout.String(), stderr: stderr.String(), dur: time.Since(start), timedOut: ctx.Err() != nil}
	r.code = cmd.ProcessState.ExitCode()
	r.maxRSSKiB = <-hwm
	_ = err
	return r
}

// vmHWM is the peak resident set of process pid in KiB, or 0.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, r.dur.Round(time.Millisecond), tail(r.stdout, 3000), tail(r.stderr, 6000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tempDir is a fresh directory with its symbolic links resolved.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	return d
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(c), 0o644))
	}
}

// --- the scripted hostile model ---

type call struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func tc(name string, args map[string]any) call {
	b, _ := json.Marshal(args)
	return call{Name: name, Arguments: string(b)}
}

// sh is an execute_command call.
func sh(command string) call { return tc("execute_command", map[string]any{"command": command}) }

// team is one agent, "solo", on the simulator with a workspace and
// execute_command: its model makes coord's calls while coordinating,
// answers, votes, then makes present's calls in its final presentation.
type team struct {
	coord, present []call
	presentSteps   [][]call // more presentation steps, after present's
	answer         string   // default "done"
	contexts       []map[string]any
	mcp            map[string]any // mcp_servers
	backend        map[string]any // more backend keys
	final          string         // the presentation's text, default "final"
	top            map[string]any // more top-level keys of the config
}

func (s team) yaml() []byte {
	var steps []any
	if len(s.coord) > 0 {
		steps = append(steps, map[string]any{"calls": s.coord})
	}
	steps = append(steps, map[string]any{"answer": cmpOr(s.answer, "done")})
	steps = append(steps, map[string]any{"when": "coordination", "vote": "agent1", "reason": "mine"})
	if len(s.present) > 0 {
		steps = append(steps, map[string]any{"calls": s.present})
	}
	for _, cs := range s.presentSteps {
		steps = append(steps, map[string]any{"calls": cs})
	}
	steps = append(steps, map[string]any{"text": cmpOr(s.final, "final")})
	backend := map[string]any{
		"type": "sim", "model": "hostile", "cwd": "ws", "enable_mcp_command_line": true,
		"scenario": map[string]any{"defaults": map[string]any{"ttft_ms": 0},
			"models": map[string]any{"hostile": map[string]any{"steps": steps}}},
	}
	if s.mcp != nil {
		backend["mcp_servers"] = s.mcp
	}
	for k, v := range s.backend {
		backend[k] = v
	}
	cfg := map[string]any{
		"agent": map[string]any{"id": "solo", "backend": backend},
		"ui":    map[string]any{"enable_final_presentation": true},
	}
	if len(s.contexts) > 0 {
		cfg["orchestrator"] = map[string]any{"context_paths": s.contexts}
	}
	for k, v := range s.top {
		cfg[k] = v
	}
	b, _ := json.MarshalIndent(cfg, "", " ")
	return b // JSON is YAML
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runTeam writes the team's config in dir and runs it as a user would.
func runTeam(t testing.TB, dir string, s team, o runOpts) result {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), s.yaml(), 0o644))
	return massgen(t, dir, o, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
}

// workspace is solo's workspace of the run in dir ("" if none).
func workspaceOf(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, ".massgen", "workspaces", "*", "solo"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// wsFile is a file of solo's workspace after the run, and whether it exists.
func wsFile(dir, name string) (string, bool) {
	ws := workspaceOf(dir)
	if ws == "" {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(ws, name))
	return string(b), err == nil
}

// plantedDir is the directory of a run's dir where a test plants the
// secrets the attacks go after: the one place they may be.
const plantedDir = "outside"

// grepTree lists the files under root (symlinks not followed) whose bytes
// contain needle, leaving out root's planted secrets.
func grepTree(root, needle string) []string {
	var hits []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == filepath.Join(root, plantedDir) {
			return filepath.SkipDir
		}
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(needle)) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}

// noCanary fails t if the canary is anywhere under dir or in r's output.
func noCanary(t testing.TB, r result, roots ...string) {
	t.Helper()
	noSecret(t, canary, r, roots...)
}

func noSecret(t testing.TB, secret string, r result, roots ...string) {
	t.Helper()
	if strings.Contains(r.stdout, secret) {
		t.Errorf("the secret %q is on stdout:\n%s", secret, excerpt(r.stdout, secret))
	}
	if strings.Contains(r.stderr, secret) {
		t.Errorf("the secret %q is on stderr:\n%s", secret, excerpt(r.stderr, secret))
	}
	for _, root := range append([]string{r.dir}, roots...) {
		if root == "" {
			continue
		}
		for _, h := range grepTree(root, secret) {
			if h == filepath.Join(r.dir, "c.yaml") {
				continue // the user's own config, written by the test: a literal api_key is there by design
			}
			b, _ := os.ReadFile(h)
			t.Errorf("the secret %q is in %s:\n%s", secret, h, excerpt(string(b), secret))
		}
	}
}

func excerpt(s, needle string) string {
	i := strings.Index(s, needle)
	if i < 0 {
		return ""
	}
	lo, hi := max(0, i-200), min(len(s), i+len(needle)+200)
	return strings.ReplaceAll(s[lo:hi], "\x00", "\\0")
}

// snap fingerprints root (empty when root does not exist).
func snap(t testing.TB, root string) wstest.Tree {
	t.Helper()
	if _, err := os.Lstat(root); err != nil {
		return nil
	}
	return wstest.Snapshot(t, root)
}

// diffTrees says what differs between two fingerprints.
func diffTrees(before, after wstest.Tree) string {
	var b strings.Builder
	for _, l := range before {
		if !slices.Contains(after, l) {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			fmt.Fprintf(&b, "  + %s\n", l)
		}
	}
	return b.String()
}

// unchanged fails t when root's fingerprint is not before.
func unchanged(t testing.TB, what, root string, before wstest.Tree) {
	t.Helper()
	if d := diffTrees(before, snap(t, root)); d != "" {
		t.Errorf("%s changed on disk:\n%s", what, d)
	}
}

// procsMatching lists the host processes whose command line holds s.
func procsMatching(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(s)) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// killMatching kills (by pid) the processes left behind that hold s.
func killMatching(s string) {
	for _, p := range procsMatching(s) {
		var pid int
		fmt.Sscanf(p, "%d:", &pid)
		if pid > 1 && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }
