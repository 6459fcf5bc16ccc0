package sandbox

import (
	"context"
	"debug/elf"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProgramContainer is a docker mode container that also runs a
// long-lived program of the agent's (a coding-agent CLI) in place of
// bubblewrap (Program).
type ProgramContainer interface {
	Container
	// Program makes the container run cmd — its program, arguments,
	// directory and env as its whole environment — and rewrites cmd into
	// a local process that stands for it: its standard streams are the
	// program's, its exit status the program's. The program sees the
	// guard's mounts, its own files read-only, o.Writable, and no network
	// but o.Net's endpoints (none without one, when the container's
	// network is none). release, once cmd has exited, kills whatever the
	// program left in the container by removing the container (the next
	// command or program gets a new one) and ends the relay.
	Program(cmd *exec.Cmd, env []string, o ContainerProgram) (release func(), err error)
	// Available waits, as long as ctx lets it, for the image: an error
	// when the engine cannot have it, nil once it has it or while its pull
	// goes on when ctx ends.
	Available(ctx context.Context) error
}

// ContainerProgram is what Program adds to the container for a program.
type ContainerProgram struct {
	// Writable are directories bound writable at their own paths (a CLI's
	// private home).
	Writable []string
	// Home is the program's HOME inside: the credential files
	// (command_line_docker_credentials mount) are bound read-only under
	// it, except those in SkipCredentials (the CLI's own settings
	// directory, which massgen writes).
	Home            string
	SkipCredentials []string
	// Net, when set, is the program's only way out: its relay runs in the
	// container beside the program (tunnelnet_linux.go), on the ports of
	// ProgramRoutes.
	Net *TunnelNet
}

// ProgramRoots are the directories that hold a program's own files (its
// package root, a Python installation, an interpreter's script), as
// Program shows them under bubblewrap: what a container must see of the
// host, read-only, to run it. System directories are left out.
func ProgramRoots(path string, args []string) []string { return viewOf(path, args).roots }

// Docker is docker mode's container of the runner, or nil (local mode, or
// no engine).
func (r *Runner) Docker() Container { return r.docker }

// Agent is the agent whose commands the runner runs.
func (r *Runner) Agent() string { return r.g.Agent() }

// programPortShift sets a program's relay apart from the commands' relay
// of the same container (code-based tools' endpoints): its ports are the
// TunnelNet's, this much higher.
const programPortShift = 100

// ProgramRoutes are n's routes as a program that Program runs with n
// reaches them.
func ProgramRoutes(n *TunnelNet) []Route {
	var out []Route
	for _, r := range n.Routes() {
		if u, err := url.Parse(r.URL); err == nil {
			if p, err := strconv.Atoi(u.Port()); err == nil {
				u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(p+programPortShift))
				r.URL = u.String()
			}
		}
		out = append(out, r)
	}
	return out
}

// ProgramRelayArgs are the arguments of a program's relay (after its
// executable): n's, on ProgramRoutes' ports.
func ProgramRelayArgs(n *TunnelNet) []string {
	args := n.RelayArgs()
	for i := 1; i < len(args); i++ {
		if p, err := strconv.Atoi(args[i]); err == nil {
			args[i] = strconv.Itoa(p + programPortShift)
		}
	}
	return args
}

// ContainerRunnable says why Program cannot run the executable path in a
// container whose image has nothing of this machine's (nil: it can): a
// static executable runs as it is; a Node program (#!/usr/bin/env node)
// by this machine's node found on path (a PATH), shown with its libraries
// from /usr; a dynamically linked executable cannot (its libraries would
// have to replace the image's, or be loaded in a way some programs do not
// survive: a Bun executable reads itself from /proc/self/exe).
func ContainerRunnable(exe, path string) error {
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return fmt.Errorf("%s is linked against this machine's libraries, which its container does not have", exe)
			}
		}
		return nil
	}
	head := make([]byte, 128)
	f, err := os.Open(exe)
	if err != nil {
		return err
	}
	n, _ := f.Read(head)
	f.Close()
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	if !strings.HasPrefix(line, "#!") || !strings.Contains(line, "node") {
		return fmt.Errorf("%s is neither a static executable nor a Node program, so its container cannot run it", exe)
	}
	node := HostNode(path)
	if node == "" {
		return fmt.Errorf("%s is a Node program and no node is on PATH", exe)
	}
	if !slices.ContainsFunc([]string{"/usr", "/lib", "/lib64"}, func(d string) bool { return within(node, d) }) {
		return fmt.Errorf("%s is a Node program, and this machine's node (%s) is not under /usr, which its container is shown", exe, node)
	}
	return nil
}

// ProgramPath is the file the program at path resolves to: a container
// is shown the program's roots (ProgramRoots), not the links on the way
// to them, which bubblewrap makes again as links.
func ProgramPath(path string) string { return resolved(path) }

// HostNode is the node that path (a PATH) finds, links resolved, or "".
func HostNode(path string) string {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, "node")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return resolved(p)
		}
	}
	return ""
}
