package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/clidocker"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Docker mode for a CLI agent (command_line_execution_mode: docker): a CLI
// the container can run (a static executable: Codex; a Node program run by
// this machine's node: Gemini CLI) runs in the agent's container
// (internal/agent/cli/clidocker); the others (Claude Code, Copilot CLI:
// dynamically linked) stay on this machine under bubblewrap, as upstream
// keeps them on the host, and the run says so. Claude Code's commands go
// to the container all the same (clicommands.go).

// cliDockerWarning is what the run says of a CLI agent in docker mode
// whose CLI cannot run in the container ("" when it can).
func cliDockerWarning(id string, v cli.Vendor, path string) string {
	err := clidocker.InContainer(v, path)
	if err == nil || slices.Contains(commandsInContainer, v.Type()) {
		return ""
	}
	return fmt.Sprintf("agent %s: command_line_execution_mode: docker: the %s CLI cannot run in its container (%v), "+
		"so it and the commands it runs are sandboxed with bubblewrap on this machine", id, v.Type(), err)
}

// cliContainer is the Docker container of agent id that its CLI runs in,
// or nil: not docker mode, a CLI the container cannot run, or no engine
// (its runner said why).
func (rw *runWorkspaces) cliContainer(id string, m *cliMember) sandbox.ProgramContainer {
	if !m.docker || clidocker.InContainer(m.vendor, m.path) != nil {
		return nil
	}
	for _, r := range rw.runners {
		if r.Agent() != id {
			continue
		}
		c, ok := r.Docker().(sandbox.ProgramContainer)
		if !ok {
			return nil
		}
		// An image the engine cannot have (no registry, a name that does
		// not exist) would fail every task: the CLI runs under bubblewrap
		// instead, and the run says so. One still being pulled is waited
		// for by the first task.
		ctx, cancel := context.WithTimeout(context.Background(), imageWait)
		defer cancel()
		if err := c.Available(ctx); err != nil {
			rw.warnings = append(rw.warnings, fmt.Sprintf("agent %s: its %s CLI cannot run in its Docker container (%v), "+
				"so it runs under bubblewrap on this machine instead", id, m.vendor.Type(), err))
			rw.dropped = append(rw.dropped, fmt.Sprintf("command_line_execution_mode: docker (agent %s)", id))
			return nil
		}
		return c
	}
	return nil
}

// imageWait is how long a run's start waits to learn whether a CLI agent's
// image can be pulled (a registry that does not answer says so at once).
const imageWait = 15 * time.Second

// dockerCLI runs a's CLI in container c; it returns the warnings the run
// shows.
func dockerCLI(a *cli.Agent, m *cliMember, c sandbox.ProgramContainer) []string {
	clidocker.Attach(a, clidocker.Options{Container: c, AllowNetwork: m.network, Network: m.dockerNet})
	switch {
	case m.network:
		return []string{fmt.Sprintf("agent %s: its %s CLI keeps its container's network (command_line_allow_network: true) "+
			"instead of reaching its provider and massgen's servers alone", a.ID, m.vendor.Type())}
	case m.dockerNet == "host":
		return []string{fmt.Sprintf("agent %s: its %s CLI shares this machine's network in its container "+
			"(command_line_docker_network_mode: host): it holds its provider's key and can reach any host this machine can, "+
			"its services on 127.0.0.1 included", a.ID, m.vendor.Type())}
	}
	return nil
}
