// Package sandbox runs an agent's shell commands with the file system view
// its workspace.Guard allows, enforced by the kernel through bubblewrap
// (bwrap): the agent's workspace is the only writable bind (plus write
// context paths during the winner's final presentation), snapshots and
// context paths are read-only, protected paths are re-bound read-only,
// hidden ones are masked, /tmp is a fresh tmpfs, the system directories
// are read-only, there is no network unless the config allows it, and the
// environment is cleared (no API keys leak into a command).
//
// Allow and block lists (upstream's command_line_allowed_commands and
// command_line_blocked_commands, regular expressions) are checked against
// each simple command of the line as a second layer: they keep a model
// from wasting turns on commands the user does not want, they are not
// what keeps the machine safe — bubblewrap is.
//
// Without bwrap a Runner refuses every command, unless the config
// explicitly accepts running unsandboxed (Config.Unsandboxed), in which
// case commands run with only the working directory, timeout, output cap
// and lists.
//
// In docker mode the commands run in a container of the configured image
// with the same mounts instead, when a Docker engine answers and the
// program links package sandbox/docker (dockerconfig.go).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen/massgen/internal/workspace"
)

// Defaults for a Config's zero values.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultMaxOutput = 50_000
	// DefaultMaxProcesses bounds the processes and threads of one
	// command: a build's workers fit, a fork bomb stops there and not at
	// the host's limit.
	DefaultMaxProcesses = 1024
)

// Config is how one agent's commands run.
type Config struct {
	// Mode is "local" (default) or "docker" (upstream's
	// command_line_execution_mode).
	Mode string
	// Network lets commands reach the network (default: none).
	Network bool
	// Unsandboxed accepts running commands without bubblewrap when it is
	// missing (config key command_line_allow_unsandboxed). Never the default.
	Unsandboxed bool
	// Allowed and Blocked are regular expressions; see Check.
	Allowed, Blocked []string
	Timeout          time.Duration // per command; 0 = DefaultTimeout
	MaxOutput        int           // bytes of output returned; 0 = DefaultMaxOutput
	// Bwrap is the bubblewrap executable; "" looks up "bwrap" in PATH.
	Bwrap string
	// Env are extra KEY=VALUE pairs for commands (the environment is
	// otherwise PATH, HOME=/tmp, TMPDIR=/tmp, LANG only).
	Env []string
	// Docker is the container of docker mode.
	Docker Docker
	// MaxProcesses bounds one command's processes and threads
	// (command_line_max_processes; 0 = DefaultMaxProcesses).
	MaxProcesses int
	// Endpoints are places outside that every command may reach even
	// without Network (massgen's tool endpoint of code-based tools): each
	// command gets a Net of its own (net.go) whose only ways out they are.
	// RouteEnv turns their routes, in Endpoints' order, into KEY=VALUE
	// pairs for the command's environment. With Network, or unsandboxed,
	// the routes are the endpoints themselves; in docker mode they go
	// through the container's relay (a TunnelNet), or are the endpoints
	// themselves with network mode host.
	Endpoints []Endpoint
	RouteEnv  func([]Route) []string
}

// Runner runs one agent's commands.
type Runner struct {
	g        *workspace.Guard
	cfg      Config
	allowed  []*regexp.Regexp
	blocked  []*regexp.Regexp
	bwrap    string           // "" when commands run unsandboxed or in Docker
	tc       func() toolchain // the user's Python, shown in the sandbox (toolchain.go); nil unless bwrap
	docker   Container        // docker mode's container
	disabled error            // why no command can run, or nil
	warnings []string
	noCgroup sync.Once
}

// New builds a runner for the agent g guards. A bad regular expression is
// an error; a missing sandbox is not (every command then says why it
// cannot run), so a team can start and its agents learn what they lack.
func New(g *workspace.Guard, cfg Config) (*Runner, error) {
	r := &Runner{g: g, cfg: cfg}
	if r.cfg.Timeout <= 0 {
		r.cfg.Timeout = DefaultTimeout
	}
	if r.cfg.MaxOutput <= 0 {
		r.cfg.MaxOutput = DefaultMaxOutput
	}
	if r.cfg.MaxProcesses <= 0 {
		r.cfg.MaxProcesses = DefaultMaxProcesses
	}
	var err error
	if r.allowed, err = compile("command_line_allowed_commands", cfg.Allowed, true); err != nil {
		return nil, err
	}
	if r.blocked, err = compile("command_line_blocked_commands", cfg.Blocked, false); err != nil {
		return nil, err
	}
	switch cfg.Mode {
	case "", "local":
		r.bwrap, r.disabled = findBwrap(cfg.Bwrap)
		if r.bwrap != "" && prlimitPath() == "" {
			r.warnings = append(r.warnings, fmt.Sprintf("agent %s: util-linux's prlimit is not installed, so commands run without "+
				"the process and file-size limits (command_line_max_processes, workspace_max_size_mb)", g.Agent()))
		}
		if r.bwrap != "" {
			hostMasks() // the walk of the system directories, once, before any command (hostview.go)
			// Resolved at the first command, not as the run starts: it
			// asks pyenv, and most agents never run Python.
			r.tc = sync.OnceValue(commandToolchain)
		}
		if r.disabled != nil && cfg.Unsandboxed {
			r.disabled = nil // the config accepted it; Sandboxed says so
		}
	case "docker":
		open := dockerOpen.Load()
		if open == nil {
			r.disabled = errDockerNotLinked
			break
		}
		var c Container
		c, r.warnings, r.disabled = (*open)(g, cfg)
		if r.disabled == nil {
			r.docker = c
		}
	default:
		return nil, fmt.Errorf("command_line_execution_mode %q is not known; use local or docker", cfg.Mode)
	}
	return r, nil
}

// Sandboxed reports whether commands run confined: under bubblewrap or
// in a Docker container.
func (r *Runner) Sandboxed() bool { return r.bwrap != "" || r.docker != nil }

// Disabled is why no command can run, or nil.
func (r *Runner) Disabled() error { return r.disabled }

// Warnings are what the user should know before the run (an image to
// pull, a credential that is not there).
func (r *Runner) Warnings() []string { return r.warnings }

// Describe tells the model where its commands run.
func (r *Runner) Describe() string {
	switch {
	case r.docker != nil:
		return fmt.Sprintf("It runs in a Docker container (%s) that keeps what you install outside your files for the rest of the run: "+
			"only your workspace is writable among your files, /tmp is private, and other paths are read-only or absent.", r.docker.Image())
	case r.bwrap != "":
		return "It runs in a sandbox: only your workspace is writable, /tmp is private and empty, and other paths are read-only or absent."
	}
	return "Keep every change inside your workspace."
}

// Container is the ID of docker mode's live container, or "".
func (r *Runner) Container() string {
	if r.docker == nil {
		return ""
	}
	return r.docker.ID()
}

// Close removes docker mode's container; a local Runner has nothing to
// close. Safe to call more than once.
func (r *Runner) Close() {
	if r.docker != nil {
		r.docker.Close()
	}
}

func compile(key string, pats []string, anchor bool) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		expr := p
		if anchor {
			expr = "^(?:" + p + ")"
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a valid regular expression: %v", key, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

var bwrapProbe struct {
	sync.Mutex
	done map[string]error
}

// bwrapProbeTimeout bounds findBwrap's probe (a variable for its test).
var bwrapProbeTimeout = 20 * time.Second

// findBwrap locates bubblewrap and checks once per executable that it can
// make a sandbox here (user namespaces may be off in a container).
func findBwrap(path string) (string, error) {
	if path == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return "", errors.New("bubblewrap (bwrap) is not installed, so commands cannot run sandboxed; " +
				"install it (Debian/Ubuntu: apt-get install bubblewrap) or set command_line_allow_unsandboxed: true " +
				"to accept running commands without a sandbox")
		}
		path = p
	}
	bwrapProbe.Lock()
	defer bwrapProbe.Unlock()
	if bwrapProbe.done == nil {
		bwrapProbe.done = map[string]error{}
	}
	err, ok := bwrapProbe.done[path]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), bwrapProbeTimeout)
		defer cancel()
		out, perr := exec.CommandContext(ctx, path, append(systemBinds(), "--unshare-all", "--die-with-parent", "true")...).CombinedOutput()
		if perr != nil {
			err = fmt.Errorf("bubblewrap (%s) cannot create a sandbox here: %v: %s; enable unprivileged user namespaces "+
				"or set command_line_allow_unsandboxed: true", path, perr, strings.TrimSpace(string(out)))
		}
		// A probe cut short by its timeout (a machine under heavy load)
		// says nothing about bubblewrap: it is not remembered, and the next
		// sandbox tries again, rather than every later one failing.
		if ctx.Err() == nil {
			bwrapProbe.done[path] = err
		}
	}
	if err != nil {
		return "", err
	}
	return path, nil
}

// Result is what one command did.
type Result struct {
	ExitCode  int
	Output    string // stdout and stderr interleaved, capped
	Truncated int    // bytes of output left out
	TimedOut  bool
	// Note is what the model must know beyond the output (the workspace
	// is over its size limit), or "".
	Note string
}

// Run runs command with sh -c in dir ("" = the workspace; otherwise a
// directory inside it).
func (r *Runner) Run(ctx context.Context, command, dir string) (Result, error) {
	if r.disabled != nil {
		return Result{}, r.disabled
	}
	if strings.TrimSpace(command) == "" {
		return Result{}, errors.New("execute_command needs a command")
	}
	if err := r.Check(command); err != nil {
		return Result{}, err
	}
	cwd, err := r.g.WorkDir(dir)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	out := &capped{max: r.cfg.MaxOutput}
	if r.docker != nil {
		// The container's workspace is the host's directory: watched the
		// same way, and a command that fills it is stopped with its
		// container, as one past its timeout is.
		dctx, stopCmd := context.WithCancel(ctx)
		defer stopCmd()
		var full atomic.Bool
		stop := r.watchSize(stopCmd, &full)
		exit, timedOut, err := r.docker.Run(dctx, cwd, command, out)
		stop()
		res := Result{ExitCode: exit, TimedOut: timedOut, Output: out.buf.String(), Truncated: out.dropped}
		if full.Load() {
			res.Note = r.fullNote()
		}
		res.Note = joinNote(res.Note, r.revertNote())
		return res, err
	}
	var cmd *exec.Cmd
	var ns *nsWait
	if r.bwrap != "" {
		used := r.g.Usage()
		var filter *os.File
		if !r.cfg.Network {
			if filter, err = seccompFile(); err != nil {
				return Result{}, fmt.Errorf("execute_command: %w", err)
			}
			defer filter.Close()
		}
		var nt *Net
		if len(r.cfg.Endpoints) > 0 && !r.cfg.Network {
			if nt, err = NewNet(r.cfg.Endpoints); err != nil {
				return Result{}, fmt.Errorf("execute_command: %w", err)
			}
			defer nt.Close()
		}
		// The sandbox's info (its init's pid) on the descriptor after the
		// filter's and the relay's: nswait_linux.go.
		infoFD := 0
		if n, nerr := newNSWait(); nerr == nil {
			ns = n
			defer ns.abandon()
			infoFD = 3
			if filter != nil {
				infoFD++
			}
			if nt != nil {
				infoFD++
			}
		}
		cmd = exec.CommandContext(ctx, r.bwrap, r.bwrapArgs(cwd, command, filter != nil, r.g.MaxBytes()-used, nt, infoFD)...)
		if filter != nil {
			cmd.ExtraFiles = []*os.File{filter} // fd 3: --seccomp 3
		}
		if nt != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nt.inside) // the relay's control socket (bwrapArgs)
		}
		if ns != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, ns.w) // --info-fd
		}
		// bwrap itself gets no environment: its init is pid 1 in the
		// sandbox, and /proc/1/environ is readable there.
		cmd.Env = []string{}
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", command)
		cmd.Dir = cwd
		cmd.Env = append(r.env(cwd), r.routeEnv(nil)...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	isolate(cmd)
	cmd.WaitDelay = 2 * time.Second
	var limitNote string
	var cg *pidsCgroup
	if r.bwrap != "" && needPidsCgroup() {
		var cerr error
		if cg, cerr = newPidsCgroup(r.cfg.MaxProcesses); cerr != nil {
			// Said once, to the model and so to the logs.
			r.noCgroup.Do(func() { limitNote = "commands run without a process limit here: " + cerr.Error() })
		} else {
			defer cg.close()
		}
	}
	if cg != nil {
		err = cg.start(cmd)
	} else {
		err = cmd.Start()
	}
	var full atomic.Bool
	if err == nil {
		if r.bwrap != "" {
			if ns != nil {
				ns.started()
			}
			stop := r.watchSize(func() { killGroup(cmd) }, &full)
			err = cmd.Wait()
			stop()
			if ns != nil {
				// Nothing of the command runs on once Run returns, and
				// the workspace is measured after its last write.
				ns.wait(5 * time.Second)
			}
		} else {
			err = cmd.Wait()
		}
	}
	res := Result{Output: out.buf.String(), Truncated: out.dropped}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	res.Note = limitNote
	if full.Load() {
		res.Note = joinNote(res.Note, r.fullNote())
	}
	res.Note = joinNote(res.Note, r.revertNote())
	if r.bwrap != "" {
		if used := r.g.Usage(); used >= r.g.MaxBytes() {
			res.Note = joinNote(res.Note, fmt.Sprintf("your workspace holds %s, at or over its limit of %s (workspace_max_size_mb): "+
				"no file can grow until you delete some", mib(used), mib(r.g.MaxBytes())))
		}
	}
	if ctx.Err() != nil {
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		killGroup(cmd) // whatever a timed-out command left behind
		return res, nil
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("execute_command: %w", err)
	}
	return res, nil
}

// revertNote says what protected entries the command made and the guard
// removed after it (protected.go), or "".
func (r *Runner) revertNote() string {
	gone := r.g.RevertProtected()
	if len(gone) == 0 {
		return ""
	}
	return "refused and removed (protected: version control, secrets and massgen's files are never written " +
		"in a context path): " + strings.Join(gone, ", ")
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// env is the whole environment of a command: nothing of massgen's own
// (which holds API keys) but PATH and LANG.
func (r *Runner) env(cwd string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	if r.bwrap == "" {
		// Unsandboxed there is no private /tmp; the workspace is home.
		env := []string{"PATH=" + path, "HOME=" + cwd, "LANG=C.UTF-8", "PWD=" + cwd}
		return append(env, r.cfg.Env...)
	}
	env := []string{"PATH=" + r.tc().withPath(path), "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "PWD=" + cwd}
	return append(env, r.cfg.Env...)
}

// systemBinds are the read-only system directories a command sees, as
// they are on the host (a symlinked /bin stays a symlink).
func systemBinds() []string {
	var args []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// /etc is needed (users, resolver, certificates, the loader cache) but
	// holds secrets; a command runs as the same user as massgen (root in a
	// container), so what only that user may read is masked (hostview.go).
	return append(args, hostMasks()...)
}

// bwrapArgs builds the sandbox for one command: seccomp says whether the
// filter is on fd 3, room is how many bytes the workspace has left.
// info, when not 0, is the descriptor bwrap writes its info to.
func (r *Runner) bwrapArgs(cwd, command string, seccomp bool, room int64, nt *Net, info int) []string {
	args := systemBinds()
	args = append(args,
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv")
	if r.cfg.Network {
		args = append(args, "--share-net")
	}
	if seccomp {
		args = append(args, "--seccomp", "3")
	}
	args = append(args, r.tc().binds...)
	args = append(args, mountArgs(r.g.Mounts())...)
	var relay []string
	if nt != nil {
		// As in ProgramWith: the relay is this executable, read-only at its
		// own path, its control socket the descriptor after the filter's.
		extra := 1
		if seccomp {
			extra = 2
		}
		relay = nt.relayArgs(extra)
		args = append(args, "--ro-bind", nt.exePath(), nt.exePath())
	}
	for _, kv := range append(r.env(cwd), r.routeEnv(nt)...) {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	if info != 0 {
		args = append(args, "--info-fd", strconv.Itoa(info))
	}
	args = append(args, "--chdir", cwd)
	args = append(args, limits(r.cfg.MaxProcesses, room)...)
	args = append(args, relay...)
	return append(args, "/bin/sh", "-c", command)
}

// routeEnv is what a command is told of its endpoints: through nt when
// it has one, the endpoints as they are when it shares the network (or
// runs unsandboxed).
func (r *Runner) routeEnv(nt *Net) []string {
	if r.cfg.RouteEnv == nil || len(r.cfg.Endpoints) == 0 {
		return nil
	}
	if nt != nil {
		return r.cfg.RouteEnv(nt.Routes())
	}
	routes := make([]Route, len(r.cfg.Endpoints))
	for i, ep := range r.cfg.Endpoints {
		routes[i] = Route{URL: ep.URL, Key: ep.Key}
	}
	return r.cfg.RouteEnv(routes)
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
	} else {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

// mountArgs are the bwrap arguments of a guard's mounts, outermost first.
func mountArgs(ms []workspace.Mount) []string {
	var out []string
	for _, m := range ms {
		switch m.Access {
		case workspace.Write:
			out = append(out, "--bind", m.Path, m.Path)
		case workspace.Read:
			out = append(out, "--ro-bind", m.Path, m.Path)
		default:
			if fi, err := os.Stat(m.Path); err == nil && fi.IsDir() {
				// An empty tmpfs hides it; left writable, so that the
				// agent's own workspace inside can still be bound (bwrap
				// makes its mount point there); writes to it vanish.
				out = append(out, "--tmpfs", m.Path)
			} else {
				out = append(out, "--ro-bind", "/dev/null", m.Path)
			}
		}
	}
	return out
}
