// Package clidocker runs a coding-agent CLI agent (internal/agent/cli) in
// its agent's Docker container: docker mode (command_line_execution_mode:
// docker) for the CLI backends.
//
// As upstream does for Codex and Gemini CLI, the CLI itself runs inside
// the container (upstream: docker exec), not on the host: every file it
// writes and every command it runs is the container's, which sees of the
// host only the agent's view (the workspace writable, snapshots and
// context paths read-only, protected paths read-only, hidden ones
// masked), the CLI's own files read-only (its package root, bound at its
// own path), its private home writable, and the credentials the config
// shares (command_line_docker_credentials mount: claude_config,
// codex_config, gemini_config, ssh_keys, …) read-only under that home,
// where the CLI and its commands look for them (~/.claude, ~/.codex,
// ~/.gemini). The one credential bound nowhere is the CLI's own settings
// directory (codex_config for Codex: ~/.codex is the CODEX_HOME massgen
// writes): its login comes as without Docker, copied into the private home
// when the agent has no key.
//
// Its network is limited as under bubblewrap: the container has none (by
// default), and a relay beside the CLI in it (sandbox.TunnelNet, over the
// standard streams of a process massgen holds) reaches only the task's
// endpoints — its provider, with the key added outside so the container
// never holds it, massgen's workflow server and the agent's MCP servers by
// URL. A bridge network the config gives the container (for its
// commands) is kept, the CLI's endpoints still relayed; with
// command_line_docker_network_mode: host, or command_line_allow_network:
// true, the endpoints are given as they are.
//
// The image need have nothing of the CLI's: a static executable (Codex's
// native binary, which its npm launcher would start) runs as it is; a Node
// program (Gemini CLI) runs by this machine's node, which the container
// is shown read-only with this machine's libraries under /.massgen/host
// and started through this machine's loader, so nothing of the image is
// replaced (the CLI's package, bound at its own path, is the pinned one).
// Dynamically linked CLIs (Claude Code, a Bun executable that reads itself
// from /proc/self/exe, and Copilot CLI) stay on the host under bubblewrap,
// as upstream keeps them on the host: InContainer says which.
//
// Each task ends with the container removed — the CLI, every process it
// started and every change outside its mounts with it — and the next task
// gets a new one; a massgen that dies takes the container with it.
package clidocker

import (
	"os/exec"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Options are how a CLI agent uses its container.
type Options struct {
	// Container is the agent's (its sandbox.Runner's Docker()).
	Container sandbox.ProgramContainer
	// AllowNetwork is command_line_allow_network: the container's own
	// network instead of the relay to the task's endpoints.
	AllowNetwork bool
	// Network is the container's network mode (command_line_docker_network_mode):
	// with host, 127.0.0.1 is this machine's, so the endpoints are given
	// as they are, as with AllowNetwork.
	Network string
}

// ownSettings are the credential mounts that are a CLI's own settings
// directory, which massgen writes in its private home.
var ownSettings = map[string]string{
	"claude_code": ".claude",
	"codex":       ".codex",
	"gemini_cli":  ".gemini",
	"copilot":     ".copilot",
}

// OwnSettings is the credential directory (under the user's home) that
// is the settings of a CLI of type typ, not bound into its container.
func OwnSettings(typ string) string { return ownSettings[typ] }

// InContainer says why a CLI whose executable is path (as the vendor
// resolves it: cli.Resolver) cannot run in its agent's container, or nil
// when it can (sandbox.ContainerRunnable): a static executable, or a
// Node program run by this machine's node.
func InContainer(v cli.Vendor, path string) error {
	if r, ok := v.(cli.Resolver); ok {
		path = r.Executable(path)
	}
	var search string
	for _, kv := range cli.BaseEnv("", path) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			search = p
		}
	}
	return sandbox.ContainerRunnable(path, search)
}

// Attach makes each task of a run its CLI in o.Container (a.Network): the
// task's endpoints through the relay, its home writable, and the
// container removed once the CLI has exited.
func Attach(a *cli.Agent, o Options) {
	a.Wrap = nil
	skip := []string{ownSettings[a.Vendor.Type()]}
	a.Network = func(eps []cli.Endpoint) (cli.Isolation, error) {
		var n *sandbox.TunnelNet
		routes := eps
		if !o.AllowNetwork && o.Network != "host" {
			in := make([]sandbox.Endpoint, len(eps))
			for i, e := range eps {
				in[i] = sandbox.Endpoint{URL: e.URL, Key: e.Key}
			}
			var err error
			if n, err = sandbox.NewTunnelNet(in); err != nil {
				return cli.Isolation{}, err
			}
			routes = nil
			for _, r := range sandbox.ProgramRoutes(n) {
				routes = append(routes, cli.Endpoint{URL: r.URL, Key: r.Key})
			}
		}
		var release func()
		return cli.Isolation{Routes: routes,
			Wrap: func(cmd *exec.Cmd, env []string) {
				rel, err := o.Container.Program(cmd, env, sandbox.ContainerProgram{Writable: []string{a.Home}, Home: a.Home,
					SkipCredentials: skip, Net: n})
				if err != nil {
					cmd.Err = err // Start says it
					return
				}
				release = rel
			},
			Release: func() {
				if release != nil {
					release()
				}
				if n != nil {
					n.Close()
				}
			}}, nil
	}
}
