package docker

// A long-lived program in the agent's container (sandbox.ProgramContainer):
// docker mode's coding-agent CLIs. The program runs in the container
// through the engine (an exec, as docker exec does), and a local process
// stands for it so that whoever started it sees an ordinary child: a shim,
// this same executable started with shimArg, which attaches the program's
// standard streams to its own and exits with its status. The shim is not
// the program: killing it leaves the program running in the container, so
// the program's release removes the container, which kills every process
// in it at once (the agent's next command or program gets a new one); a
// massgen that dies, even by kill -9, takes the container with it (the
// hold of box.go), and the shim with it (its parent-death signal).
//
// The container sees the host's files only through its mounts: the
// guard's view as for commands, the program's own files (its package
// root) read-only, the directories it may write (the CLI's home), the
// credentials the config shares under the program's home, read-only, and,
// when its network is a sandbox.TunnelNet, its relay beside it: this
// executable again, run through the host's loader as the commands' relay
// is (endpoints.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// shimArg, as the first argument, makes this executable the shim of a
// program in a container; its spec comes on descriptor 3.
const shimArg = "__massgen_docker_exec__"

// hostDir is where the container sees the stream relay's files.
const hostDir = "/.massgen-host"

func init() {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(shimMain())
	}
}

// shimSpec is the program the shim runs in the container.
type shimSpec struct {
	Container string
	User      string
	Dir       string
	Env       []string
	Cmd       []string
}

// Program runs cmd in the agent's container; see sandbox.ProgramContainer.
func (b *dockerBox) Program(cmd *exec.Cmd, env []string, o sandbox.ContainerProgram) (func(), error) {
	if o.Net != nil && b.cfg.Network == "host" {
		// 127.0.0.1 in the container would be this machine's: the relay's
		// ports are not its own.
		return nil, fmt.Errorf("agent %s: a relay to its program's endpoints needs a network of the container's own, "+
			"not command_line_docker_network_mode: host", b.g.Agent())
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var extra []mount.Mount
	for _, r := range sandbox.ProgramRoots(cmd.Path, cmd.Args[1:]) {
		extra = append(extra, mount.Mount{Type: mount.TypeBind, Source: r, Target: r, ReadOnly: true})
	}
	for _, d := range o.Writable {
		extra = append(extra, mount.Mount{Type: mount.TypeBind, Source: d, Target: d})
	}
	if o.Home != "" {
		userHome, _ := os.UserHomeDir()
		for _, rel := range b.cfg.Credentials.Files {
			if slices.Contains(o.SkipCredentials, rel) || userHome == "" {
				continue
			}
			src := filepath.Join(userHome, rel)
			if _, err := os.Stat(src); err != nil {
				continue // said when the box was made
			}
			extra = append(extra, mount.Mount{Type: mount.TypeBind, Source: src, Target: filepath.Join(o.Home, rel), ReadOnly: true})
		}
	}
	argv, hostRun, err := containerArgv(sandbox.ProgramPath(cmd.Path), cmd.Args[1:], env)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", b.g.Agent(), err)
	}
	var relay []string
	if o.Net != nil || hostRun {
		rt, err := hostRuntime() // endpoints.go: this machine's programs, run through its loader
		if err != nil {
			return nil, fmt.Errorf("agent %s: this machine's runtime in its container: %w", b.g.Agent(), err)
		}
		if o.Net != nil {
			relay = append(slices.Clone(rt.relay), sandbox.ProgramRelayArgs(o.Net)...)
		}
		if b.ep == nil { // else the commands' relay has them bound already
			extra = append(extra, rt.mounts...)
		}
	}
	b.mu.Lock()
	b.extra = extra
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	id, err := b.container(ctx)
	if err != nil {
		return nil, err
	}
	stopRelay := func() {}
	if relay != nil {
		if stopRelay, err = b.startRelay(ctx, id, relay, o.Net); err != nil {
			b.reset(id)
			return nil, err
		}
	}
	// The program's environment: its own, and the credentials' variables
	// (env_vars, env_file, pass_all_env) as commands get them; not the
	// commands' HOME and PATH.
	full := slices.Clone(env)
	for _, kv := range b.env {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "TMPDIR" && k != "LANG" && k != "PATH" {
			full = append(full, kv)
		}
	}
	spec, err := json.Marshal(shimSpec{Container: id, User: b.user, Dir: cmd.Dir, Env: full,
		Cmd: argv})
	if err != nil {
		stopRelay()
		b.reset(id)
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		stopRelay()
		b.reset(id)
		return nil, err
	}
	go func() {
		_, _ = w.Write(spec)
		w.Close()
	}()
	cmd.Path = self
	cmd.Args = []string{self, shimArg}
	cmd.ExtraFiles = []*os.File{r}
	cmd.Env = engineEnv()
	return func() {
		r.Close()
		stopRelay()
		b.reset(id) // kills whatever the program left running
	}, nil
}

// Available waits, as long as ctx lets it, for the container's image: an
// error when the engine cannot have it (its pull failed), nil once it has
// it or while it is still being pulled when ctx ends (a program then
// waits for it).
func (b *dockerBox) Available(ctx context.Context) error {
	b.mu.Lock()
	p, fresh := b.pull, b.fresh
	b.mu.Unlock()
	if fresh || p == nil {
		return nil
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("Docker image %s is not on the engine and cannot be pulled: %v", b.cfg.Image, p.err)
		}
	case <-ctx.Done():
	}
	return nil
}

// containerArgv is how the container runs path with args: a static
// executable as it is; a Node script (#!/usr/bin/env node, the CLIs' npm
// launchers) by this machine's node, which the image need not have, run
// through this machine's loader from /.massgen/host (hostRun: the runtime's
// mounts are needed). Anything else needs what the image does not have.
func containerArgv(path string, args, env []string) (argv []string, hostRun bool, err error) {
	search := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			search = v
		}
	}
	if err := sandbox.ContainerRunnable(path, search); err != nil {
		return nil, false, err
	}
	if loader, _, err := interpreter(path); err == nil && loader == "" {
		return append([]string{path}, args...), false, nil // static
	}
	node := sandbox.HostNode(search)
	nl, runpath, err := interpreter(node)
	if err != nil {
		return nil, false, err
	}
	argv = []string{hostRoot + node}
	if nl != "" {
		argv = []string{hostRoot + nl, "--library-path", libraryPath(nl, runpath), hostRoot + node}
	}
	return append(append(argv, path), args...), true, nil
}

// engineEnv is the shim's environment: how to reach the engine, nothing
// else of massgen's.
func engineEnv() []string {
	var out []string
	for _, k := range []string{"DOCKER_HOST", "DOCKER_API_VERSION", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// startRelay runs the network relay (argv) in container id, serves it
// with n until the returned stop, and returns once the relay listens: the
// relay of a program (Program) and that of a container's commands
// (startEndpointsLocked).
func (b *dockerBox) startRelay(ctx context.Context, id string, argv []string, n *sandbox.TunnelNet) (func(), error) {
	fail := func(err error) (func(), error) {
		return nil, fmt.Errorf("cannot start the network relay in agent %s's container: %w", b.g.Agent(), err)
	}
	ex, err := b.cli.ExecCreate(ctx, id, client.ExecCreateOptions{User: b.user, AttachStdin: true, AttachStdout: true,
		AttachStderr: true, Env: []string{"LANG=C.UTF-8"}, WorkingDir: "/", Cmd: argv})
	if err != nil {
		return fail(err)
	}
	att, err := b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return fail(err)
	}
	pr, pw := io.Pipe()
	stderr := &capped{max: 2000}
	go func() {
		_, err := stdcopy.StdCopy(pw, stderr, att.Reader)
		pw.CloseWithError(err)
	}()
	done, ready := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_ = n.ServeReady(pr, att.Conn, func() { close(ready) })
		att.Close() // a tunnel torn down (an overrun) ends its relay too
	}()
	stop := func() {
		att.Close()
		pr.Close()
		<-done
	}
	// Nothing must start before the relay listens: it would find nothing
	// at its endpoints.
	select {
	case <-ready:
	case <-done:
		stop()
		return fail(fmt.Errorf("it ended at once: %s", strings.TrimSpace(stderr.buf.String())))
	case <-time.After(relayTimeout):
		stop()
		return fail(fmt.Errorf("it did not listen within %v: %s", relayTimeout, strings.TrimSpace(stderr.buf.String())))
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	return stop, nil
}

// shimMain runs the program of the spec on descriptor 3 in its container,
// its standard streams the shim's, and exits with its status.
func shimMain() int {
	spec := os.NewFile(3, "massgen-docker-exec-spec")
	var s shimSpec
	err := json.NewDecoder(spec).Decode(&s)
	spec.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "massgen docker exec: no spec:", err)
		return 127
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "massgen docker exec:", err)
		return 127
	}
	defer cli.Close()
	ctx := context.Background()
	ex, err := cli.ExecCreate(ctx, s.Container, client.ExecCreateOptions{User: s.User, AttachStdin: true, AttachStdout: true,
		AttachStderr: true, Env: s.Env, WorkingDir: s.Dir, Cmd: s.Cmd})
	if err != nil {
		fmt.Fprintln(os.Stderr, "massgen docker exec:", err)
		return 127
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "massgen docker exec:", err)
		return 127
	}
	defer att.Close()
	go func() {
		_, _ = io.Copy(att.Conn, os.Stdin)
		_ = att.CloseWrite()
	}()
	_, _ = stdcopy.StdCopy(os.Stdout, os.Stderr, att.Reader)
	for i := 0; i < 100; i++ {
		ins, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return 137 // the container went: killed
		}
		if !ins.Running {
			return ins.ExitCode
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 137
}

var _ sandbox.ProgramContainer = (*dockerBox)(nil)
