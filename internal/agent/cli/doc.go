// Package cli runs a coding-agent CLI — Claude Code, Codex, Gemini CLI —
// as a member of a team. The vendor's own program is the agent: it runs
// its own tool loop in the agent's workspace, in its non-interactive
// streaming mode, and ends a coordination turn by calling new_answer or
// vote on massgen's workflow tools, served to it over MCP
// (internal/agent/workflowmcp), and a post-evaluation of the final answer
// by calling submit or restart_orchestration on the same server. What it streams (text, tool calls, usage)
// becomes the agent's Outcomes, like any agent's.
//
// What differs between CLIs is a Vendor, one package each below this one
// (claudecode, codex, geminicli): how to lay out the CLI's settings and
// MCP configuration in its private home, its command line and environment,
// and how to read its output. Everything else is here, once: the process
// (its own session, killed whole when its task ends, dying with massgen),
// the workflow server, the task kinds, the session kept between turns.
//
// The agent's own massgen tools (custom tools, task planning, subagents)
// are served to the CLI over MCP too, each call bound to the task in
// progress; round time reaches the CLI mid-turn: the wrap-up message on
// its next such call, the hard limit by a restart with the workflow tools
// only (round.go).
//
// A CLI is not trusted to keep to its workspace by its own permission
// system: Agent.Wrap runs it in the agent's sandbox (bubblewrap, in the
// agent's view of the file system), set by the program that builds the
// team.
package cli
