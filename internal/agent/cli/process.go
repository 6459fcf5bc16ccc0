package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/redact"
)

// maxLine is the longest output line read whole; a CLI's JSON events can
// carry a file's contents.
const maxLine = 32 << 20

// stderrKept is how much of a CLI's standard error is kept to explain its
// failure.
const stderrKept = 4 << 10

// ProcessError is a CLI that ended without doing its task: how it exited
// and the end of what it wrote on standard error.
type ProcessError struct {
	Program string
	Err     error  // the exit status, or why it could not start
	Stderr  string // its last words, secrets masked
}

func (e *ProcessError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Program, e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

func (e *ProcessError) Unwrap() error { return e.Err }

// BaseEnv is a CLI's environment without its vendor's additions: a PATH
// that finds its interpreter (node) and massgen's tools, its private home,
// and nothing of massgen's own environment (which holds every provider's
// key).
func BaseEnv(home, program string) []string {
	// The system's directories last: a script's "#!/usr/bin/env node"
	// must find node in a sandbox that shows nothing else of the host.
	path := os.Getenv("PATH") + ":/usr/local/bin:/usr/bin:/bin"
	if dir := filepath.Dir(program); dir != "." {
		path = dir + string(os.PathListSeparator) + path
	}
	return []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + filepath.Join(home, "tmp"), "LANG=C.UTF-8",
		"NO_COLOR=1", "TERM=dumb", "CI=true"}
}

// exec runs the CLI once for inv, reports its output through emit and
// returns what it said about the task. Cancelling ctx kills it and every
// process it started at once.
func (a *Agent) exec(ctx context.Context, inv *Invocation, emit func(agent.Outcome)) (Result, error) {
	for _, d := range []string{a.Home, filepath.Join(a.Home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Result{}, err
		}
	}
	inv, wrap, release, err := a.routed(inv)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", a.Vendor.Type(), err)
	}
	defer release() // after the CLI is gone: the deferred calls below run first
	spec, err := a.Vendor.Prepare(inv)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", a.Vendor.Type(), err)
	}
	env := append(append([]string{}, a.Env...), spec.Env...)
	if a.Env == nil {
		env = append(BaseEnv(a.Home, a.Path), spec.Env...)
	}
	path := a.Path
	if r, ok := a.Vendor.(Resolver); ok {
		path = r.Executable(a.Path)
	}
	cmd := exec.Command(path, spec.Args...)
	cmd.Dir = a.Workdir
	if wrap != nil {
		wrap(cmd, env)
	} else {
		cmd.Env = env
	}
	isolate(cmd)
	if spec.Stdin != "" {
		cmd.Stdin = strings.NewReader(spec.Stdin)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	tail := &tailBuffer{max: stderrKept}
	cmd.Stderr = tail
	cmd.WaitDelay = 2 * time.Second
	name := filepath.Base(a.Path)
	if err := cmd.Start(); err != nil {
		return Result{}, &ProcessError{Program: name, Err: err}
	}
	// Kill the whole session the moment the task ends, however it ends.
	stop := context.AfterFunc(ctx, func() { _ = killGroup(cmd) })
	defer stop()

	dec := spec.Decoder
	if dec == nil {
		dec = a.Vendor.Decoder()
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		for _, o := range dec.Line(sc.Bytes()) {
			if mc, ok := o.(agent.ModelCall); ok && mc.Model == "" {
				mc.Model = a.Model // a CLI that does not name its model
				o = mc
			}
			emit(o)
		}
		if st, ok := dec.(Stopper); ok && st.Stop() {
			_ = killGroup(cmd)
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout) // a line past maxLine: drain, so the CLI is not blocked
	werr := cmd.Wait()
	_ = killGroup(cmd) // what it left running
	res := dec.End()
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case res.Err != nil:
		return res, res.Err
	case werr != nil:
		return res, &ProcessError{Program: name, Err: werr, Stderr: redact.String(tail.String())}
	}
	return res, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var errNoProgram = errors.New("not found on PATH")

// Find resolves a vendor's program: on PATH, or in dirs (massgen setup's
// install directory), in that order.
func Find(v Vendor, dirs ...string) (string, error) {
	if p, err := exec.LookPath(v.Program()); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, v.Program())
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s (the %s CLI) is %w", v.Program(), v.Type(), errNoProgram)
}
