package app

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/tool/files"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Claude Code in docker mode, as upstream v0.1.73 runs it: the CLI on this
// machine (here under bubblewrap: it is a dynamically linked program the
// container cannot run), and the commands it runs in the agent's Docker
// container, through massgen's execute_command served to it over MCP with
// its other massgen tools (mcp__massgen_tools__execute_command); Claude
// Code's own Bash is off, so no command of its runs on this machine.

// commandsInContainer is the vendor types whose commands move into the
// agent's container this way.
var commandsInContainer = []string{"claude_code"}

// commandsToContainer gives a's CLI the agent's container for its commands
// when it can: docker mode, a vendor of commandsInContainer, a container
// whose image the engine can have. It returns what the run says.
func (rw *runWorkspaces) commandsToContainer(a *cli.Agent, m *cliMember) []string {
	if !m.docker || !slices.Contains(commandsInContainer, m.vendor.Type()) {
		return nil
	}
	var runner *sandbox.Runner
	for _, r := range rw.runners {
		if r.Agent() == a.ID && r.Docker() != nil && r.Disabled() == nil {
			runner = r
		}
	}
	if runner == nil {
		return []string{fmt.Sprintf("agent %s: command_line_execution_mode: docker: its %s CLI has no container to run its "+
			"commands in, so it and its commands are sandboxed with bubblewrap on this machine", a.ID, m.vendor.Type())}
	}
	if c, ok := runner.Docker().(interface{ Available(context.Context) error }); ok {
		ctx, cancel := context.WithTimeout(context.Background(), imageWait)
		defer cancel()
		if err := c.Available(ctx); err != nil {
			rw.dropped = append(rw.dropped, fmt.Sprintf("command_line_execution_mode: docker (agent %s)", a.ID))
			return []string{fmt.Sprintf("agent %s: its container cannot run (%v), so its %s CLI's commands run under "+
				"bubblewrap on this machine instead", a.ID, err, m.vendor.Type())}
		}
	}
	a.Tools = append(slices.Clip(a.Tools), files.Command(runner))
	a.Options = maps.Clone(a.Options)
	if a.Options == nil {
		a.Options = map[string]any{}
	}
	denied := []any{"Bash"}
	if l, ok := a.Options["disallowed_tools"].([]any); ok {
		denied = append(slices.Clone(l), denied...)
	} else if l, ok := a.Options["disallowed_tools"].([]string); ok {
		for _, s := range l {
			denied = append(denied, s)
		}
	}
	a.Options["disallowed_tools"] = denied
	return nil
}
