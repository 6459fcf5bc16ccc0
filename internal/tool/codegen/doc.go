// Package codegen is code-based tools (upstream's enable_code_based_tools,
// the CodeAct style): an agent's MCP tools become Python functions in its
// workspace, which it imports and calls from scripts it runs with
// execute_command, instead of tools offered through function calling.
//
// The layout and the functions are upstream v0.1.73's, so its prompts and
// skills work unchanged:
//
//	servers/__init__.py            the registry: which servers there are
//	servers/<server>/__init__.py   from .<tool> import <tool> for each tool
//	servers/<server>/<tool>.py     def <tool>(required..., optional=None)
//	custom_tools/__init__.py       the custom tools directory
//	.mcp/client.py                 call_mcp_tool(server, tool, arguments)
//	.mcp/servers.json              the servers' names and kinds
//
// What differs is how a wrapper reaches its server. Upstream's client.py
// imports massgen and starts its own copy of every MCP server from
// servers.json (commands, arguments and environment, API keys included,
// written into the workspace). Here the servers stay massgen's: client.py
// posts each call to a Hub, a small HTTP endpoint massgen serves on
// 127.0.0.1 for the run, with the agent's own token. The Hub calls the
// tool through massgen's MCP client (package mcp) with the agent's filters
// and guard, and only the tools the agent was given; servers.json holds no
// command and no secret. A sandboxed command has no network, so it reaches
// the Hub through the sandbox's relay (sandbox.Config.Endpoints): the
// Hub's address is the one way out, and the command holds only a stand-in
// for the token, which the relay replaces.
//
// Agent splits an agent's MCP tool source: the servers of
// direct_mcp_servers stay function-calling tools (Agent.Direct), the rest
// are written as wrappers whenever the source resolves (the first turn,
// and again when a server's tools change or the files are gone).
//
// The package imports the tool seam and package mcp for a tool's origin;
// it must not import the app, the agent or the orchestrator.
package codegen
