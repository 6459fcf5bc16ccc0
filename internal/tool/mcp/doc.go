// Package mcp is massgen's MCP client: it runs the MCP servers a team's
// backends list under mcp_servers and offers their tools to the agents as
// mcp__<server>__<tool>, upstream MassGen's names, so prompts and filters
// written for upstream keep working.
//
// A Pool holds the servers of one team. Each distinct server config is
// started once and shared by every agent that lists it; calls on it may
// run concurrently. Pool.Start (or StartIn) starts them all in parallel in the
// background; an agent's tools are a tool.Source, resolved (waited for)
// only when its first request needs the definitions, so start-up overlaps
// with the rest of the run instead of preceding it.
//
// What a server can do to a run is bounded: a call has a timeout; a lost
// connection is re-established once and the call retried; a server that
// keeps failing is paused by a circuit breaker; a server that fails to
// start is an error naming the command, its exit status and the tail of
// its stderr (kept in mcp_<name>_stderr.log, in the directory StartIn
// names), and Pool.RetryFailed starts it again after a back-off. A server
// that says its tools changed (notifications/tools/list_changed) is
// listed again, and the agents' next resolve has the new list. Progress
// and log notifications reach the call's context (tool.ReportProgress).
// Stdio servers run in their
// own process group, which dies with massgen (Pdeathsig on Linux, even
// after kill -9) and is killed whole by Pool.Close, or, for the servers of
// one agent (Server.Owner) whose phase of a run is over, Pool.CloseOwner. Results are rendered
// as text for the model (structured content as JSON, images and audio
// described, resources inlined or described) and capped, with a note
// saying how much was cut.
//
// The package is built on github.com/modelcontextprotocol/go-sdk and
// imports tool and llm, nothing above them.
package mcp
