package sandbox

import (
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
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
func ProgramRoots(path string, args []string) []string {
	var out []string
	b := programBinds(path, args)
	for i := 0; i+2 < len(b); i += 3 {
		if b[i] == "--ro-bind" && !slices.Contains(out, b[i+1]) {
			out = append(out, b[i+1])
		}
	}
	return out
}

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
