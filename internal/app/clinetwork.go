package app

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// A sandboxed CLI's network is by default limited to what massgen names
// for each task: its provider's endpoint, massgen's workflow server (and
// its tools' server) and the MCP servers of the agent's config that are
// reached by URL (sandbox.Net). Everything else — the host's loopback
// services, the LAN, cloud metadata, the internet — is out of its reach,
// and of every command and stdio MCP server it starts. The backend's
// command_line_allow_network: true is the user's consent to give it the
// host's network instead.

// sandboxCLI runs a's CLI in the agent's sandbox (g's view, its home
// writable), with its network limited unless the member's backend
// consents to the host's; it returns the warnings the run shows.
func sandboxCLI(a *cli.Agent, m *cliMember, bwrap string, g *workspace.Guard) []string {
	opts := sandbox.ProgramOptions{Writable: []string{a.Home}}
	if m.network {
		a.Wrap = func(cmd *exec.Cmd, env []string) { sandbox.ProgramWith(bwrap, g, cmd, env, opts) }
		return []string{fmt.Sprintf("agent %s: its %s CLI keeps the host's network (command_line_allow_network: true): "+
			"it, the commands it runs and its MCP servers can reach any host this machine can, its services on "+
			"127.0.0.1 and cloud metadata included", a.ID, m.vendor.Type())}
	}
	a.Network = func(eps []cli.Endpoint) (cli.Isolation, error) {
		var in []sandbox.Endpoint
		for _, e := range eps {
			in = append(in, sandbox.Endpoint{URL: e.URL, Key: e.Key})
		}
		n, err := sandbox.NewNet(in)
		if err != nil {
			return cli.Isolation{}, err
		}
		var routes []cli.Endpoint
		for _, r := range n.Routes() {
			routes = append(routes, cli.Endpoint{URL: r.URL, Key: r.Key})
		}
		o := opts
		o.Net = n
		return cli.Isolation{Routes: routes, Release: func() { n.Close() },
			Wrap: func(cmd *exec.Cmd, env []string) { sandbox.ProgramWith(bwrap, g, cmd, env, o) }}, nil
	}
	var warnings []string
	if _, known := m.vendor.(cli.DefaultEndpoint); !known && m.baseURL == "" {
		// Copilot CLI on GitHub's service talks to several GitHub hosts.
		warnings = append(warnings, fmt.Sprintf("agent %s: its %s CLI's network is limited to its provider, whose endpoint massgen "+
			"knows only from base_url: its tasks fail until its backend sets base_url or command_line_allow_network: true",
			a.ID, m.vendor.Type()))
	}
	var stdio []string
	for _, s := range m.mcp {
		if s.URL == "" {
			stdio = append(stdio, s.Name)
		}
	}
	if len(stdio) == 0 {
		return warnings
	}
	return append(warnings, fmt.Sprintf("agent %s: its %s CLI's network is limited to its provider and massgen's servers, so its MCP "+
		"servers run without one (%s): npx or uvx cannot fetch them and they cannot reach their own services; "+
		"command_line_allow_network: true on its backend gives the CLI the host's network",
		a.ID, m.vendor.Type(), strings.Join(stdio, ", ")))
}
