// Package docker is docker mode (command_line_execution_mode: docker): an
// agent's commands in a container, with the mounts its workspace.Guard
// allows. Importing it registers it with package sandbox; a program that
// does not import it does not link the Docker client (about 35 packages,
// and an image-reference parser that compiles its patterns at start-up).
package docker

// Docker mode (command_line_execution_mode: docker). An agent's commands
// run in one container of the configured image, created at its first
// command and removed when the run ends, with the same mounts as under
// bubblewrap: every path of the guard's view bound at its own path (the
// workspace writable, snapshots and context paths read-only, write
// context paths writable for the winner at its presentation, protected
// paths re-bound read-only, hidden ones masked), a fresh /tmp, no network
// unless command_line_docker_network_mode says otherwise, every capability
// dropped and no privilege gained (unless command_line_docker_enable_sudo),
// and the host's user, so that files written in the workspace are the
// user's. What a command changes outside those mounts stays in the
// container's own layer, which goes with the container.
//
// The container's main process only waits on its standard input, which
// massgen's attach connection holds open: when massgen dies, even by
// kill -9, the engine closes that input, the process ends and the engine
// removes the container (AutoRemove). No container outlives its run.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Bounds of the engine's slower operations.
const (
	pingTimeout    = 5 * time.Second
	pullTimeout    = 10 * time.Minute
	installTimeout = 10 * time.Minute
	removeTimeout  = 15 * time.Second
	pidsLimit      = 4096 // a fork bomb stops here, a parallel build does not
)

// home is HOME inside the container: its fresh /tmp, as under bubblewrap.
const home = "/tmp"

// dockerBox is one agent's container.
type dockerBox struct {
	cli   *client.Client
	cfg   sandbox.Docker
	g     *workspace.Guard
	env   []string // KEY=VALUE for every command
	binds []mount.Mount
	ep    *endpoints    // the container's endpoints (endpoints.go), or nil
	extra []mount.Mount // a program's (Program)
	user  string

	mu    sync.Mutex
	id    string // the live container; "" before the first command or after a reset
	made  string // the mounts it was made with
	hold  *client.HijackedResponse
	fresh bool     // the image is known to be on the engine
	pull  *pulling // the image's pull in flight, or failed
}

// newDockerBox connects to the engine DOCKER_HOST names (the local socket
// by default). An engine that does not answer is the error; an image not
// there yet is a warning, and its pull starts at once.
func init() {
	sandbox.RegisterDocker(func(g *workspace.Guard, cfg sandbox.Config) (sandbox.Container, []string, error) {
		b, warnings, err := newDockerBox(g, cfg)
		if err != nil {
			return nil, nil, err
		}
		return b, warnings, nil
	})
}

func newDockerBox(g *workspace.Guard, cfg sandbox.Config) (*dockerBox, []string, error) {
	d := cfg.Docker
	if d.Image == "" {
		d.Image = sandbox.DefaultImage
	}
	if d.Network == "" {
		d.Network = "none"
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, nil, dockerMissing("", err)
	}
	if !localEngine(cli.DaemonHost()) {
		cli.Close()
		return nil, nil, fmt.Errorf("command_line_execution_mode: docker needs a Docker engine on this machine: the agent's workspace "+
			"and context paths are bound by their paths here, which the engine at %s does not see; unset DOCKER_HOST "+
			"or point it at a local engine", cli.DaemonHost())
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, nil, dockerMissing(cli.DaemonHost(), err)
	}
	b := &dockerBox{cli: cli, cfg: d, g: g}
	var warnings []string
	if _, err := cli.ImageInspect(ctx, d.Image); err == nil {
		b.fresh = true
	} else if cerrdefs.IsNotFound(err) {
		warnings = append(warnings, fmt.Sprintf("agent %s: Docker image %s is not on the engine; pulling it (its commands wait for it)", g.Agent(), d.Image))
		b.pull = b.startPull()
	} else {
		cli.Close()
		return nil, nil, fmt.Errorf("command_line_execution_mode: docker: the engine at %s cannot inspect image %s: %v", cli.DaemonHost(), d.Image, err)
	}
	b.env = []string{"HOME=" + home, "TMPDIR=/tmp", "LANG=C.UTF-8"}
	if d.Credentials.PassAllEnv {
		b.env = append(b.env, allEnv()...) // mounts.go
	}
	b.env = append(b.env, d.Credentials.Env...)
	for _, name := range d.Credentials.EnvVars {
		if v, ok := os.LookupEnv(name); ok {
			b.env = append(b.env, name+"="+v)
		} else {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials env_vars: %s is not set, so commands do not get it", g.Agent(), name))
		}
	}
	b.env = append(b.env, cfg.Env...)
	more, err := b.setEndpoints(ctx, cfg)
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	warnings = append(warnings, more...)
	userHome, _ := os.UserHomeDir()
	for _, rel := range d.Credentials.Files {
		src := filepath.Join(userHome, rel)
		if _, err := os.Stat(src); err != nil || userHome == "" {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials: %s does not exist, so it is not shared", g.Agent(), src))
			continue
		}
		b.binds = append(b.binds, mount.Mount{Type: mount.TypeBind, Source: src, Target: filepath.Join(home, rel), ReadOnly: true})
	}
	extraBinds, warned := additionalMounts(g, d.Credentials.Mounts) // mounts.go
	b.binds, warnings = append(b.binds, extraBinds...), append(warnings, warned...)
	if !d.Sudo {
		b.user = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
		if rootless(ctx, cli) {
			// A rootless engine maps the container's root to the user who
			// runs it, and every other uid to one of the user's sub-uids:
			// root in there is what writes the workspace as the user.
			b.user = "0:0"
		}
	}
	return b, warnings, nil
}

// localEngine reports whether the engine at host (a DOCKER_HOST) runs on
// this machine: a socket, or TCP on the loopback.
func localEngine(host string) bool {
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "unix", "npipe":
		return true
	case "tcp", "http", "https":
		h := u.Hostname()
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// rootless reports whether the engine runs rootless (its security
// options say so).
func rootless(ctx context.Context, cli *client.Client) bool {
	info, err := cli.Info(ctx, client.InfoOptions{})
	return err == nil && slices.ContainsFunc(info.Info.SecurityOptions, func(o string) bool { return strings.Contains(o, "rootless") })
}

func dockerMissing(host string, err error) error {
	at := ""
	if host != "" {
		at = " at " + host
	}
	return fmt.Errorf("command_line_execution_mode: docker is not available here: no Docker engine answers%s (%v); "+
		"start one (or set DOCKER_HOST), or use command_line_execution_mode: local, which runs commands under bubblewrap", at, err)
}

// run runs command in dir of the agent's container, writing its output
// (stdout and stderr interleaved) to out. A command that outlives ctx is
// killed with its container, which the next command makes anew.
// Image is the image the container runs.
func (b *dockerBox) Image() string { return b.cfg.Image }

// ID is the live container's, or "".
func (b *dockerBox) ID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.id
}

func (b *dockerBox) Run(ctx context.Context, dir, command string, out io.Writer) (exit int, timedOut bool, err error) {
	for attempt := 0; ; attempt++ {
		id, err := b.container(ctx)
		if err != nil {
			return 0, false, err
		}
		exit, started, err := b.exec(ctx, id, b.user, dir, []string{"/bin/sh", "-c", command}, out)
		gone := cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) || (err == nil && (exit >= 128 || exit < 0) && !b.running(ctx, id))
		switch {
		case ctx.Err() != nil:
			b.reset(id)
			return exit, errors.Is(ctx.Err(), context.DeadlineExceeded), nil
		case gone && !started && attempt == 0:
			// The container went before the command started (stopped,
			// killed, removed by hand): a new one. A command that had
			// started is never run twice.
			b.reset(id)
			continue
		case gone:
			b.reset(id)
			return -1, false, fmt.Errorf("the Docker container of agent %s stopped while the command ran (killed, or out of memory: "+
				"see command_line_docker_memory_limit); the next command gets a new one", b.g.Agent())
		case err != nil:
			return exit, false, fmt.Errorf("execute_command in Docker container: %w", err)
		}
		return exit, false, nil
	}
}

// running reports whether container id still runs: a command killed by a
// signal may have been killed with it, which the engine records a moment
// after the command's end, so a second is given to tell.
func (b *dockerBox) running(ctx context.Context, id string) bool {
	for range 20 {
		ins, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil || ins.Container.State == nil || !ins.Container.State.Running {
			return false
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// exec runs cmd in container id and waits for it; started says whether
// the engine may have started it.
func (b *dockerBox) exec(ctx context.Context, id, user, dir string, cmd []string, out io.Writer) (exit int, started bool, err error) {
	ex, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{User: user, AttachStdout: true, AttachStderr: true,
		Env: b.env, WorkingDir: dir, Cmd: cmd})
	if err != nil {
		return 0, false, err
	}
	att, err := b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, true, err
	}
	defer att.Close()
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, att.Reader)
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		att.Close()
		<-copied
		return -1, true, ctx.Err()
	}
	if err != nil {
		return 0, true, err
	}
	// The stream ends a moment before the engine records the exit code.
	wait := time.Millisecond
	for i := 0; ; i++ {
		ins, err := b.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return 0, true, err
		}
		if !ins.Running || i == 50 {
			return ins.ExitCode, true, nil
		}
		select {
		case <-ctx.Done():
			return -1, true, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
