package app

import (
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
)

// A coding-agent CLI brings its own tool loop, so the kit's tools (task
// planning, subagents) cannot be offered to it by function calling: its
// CLI is served them over MCP with its custom tools (cli.ToolsServer,
// mcp__massgen_tools__create_task_plan in Claude Code), with the same
// state and files as an LLM agent's, each call bound to the task in
// progress (internal/agent/cli, round.go). Their prompt sections go into
// its system message like any agent's, which becomes the CLI's system
// prompt.

// cliAgentOf is a's CLI agent, or nil when a is not one.
func cliAgentOf(a *orchestrator.Agent) *cli.Agent {
	c, _ := a.Impl.(*cli.Agent)
	return c
}

// addCLITools serves tools to a's CLI; false when a is not a CLI agent.
func addCLITools(a *orchestrator.Agent, tools ...tool.Tool) bool {
	c := cliAgentOf(a)
	if c == nil {
		return false
	}
	c.Tools = append(c.Tools, tools...)
	return true
}

// mapCLITools replaces each tool served to a's CLI by f of it (the
// subagents' notices on every result); false when a is not a CLI agent.
func mapCLITools(a *orchestrator.Agent, f func(tool.Tool) tool.Tool) bool {
	c := cliAgentOf(a)
	if c == nil {
		return false
	}
	for i, t := range c.Tools {
		c.Tools[i] = f(t)
	}
	return true
}
