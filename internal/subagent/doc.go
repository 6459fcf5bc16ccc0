// Package subagent gives an agent helpers of its own: child massgen runs
// it starts with the subagent tools (spawn_subagents, list_subagents,
// continue_subagent, send_message_to_subagent, cancel_subagent, with
// upstream MassGen v0.1.73's argument schemas), each in a workspace inside
// the parent's, with its own logs under the parent's log directory.
//
// A Manager belongs to one agent of one run. It starts children through a
// Runner (internal/app runs each in-process as a whole massgen run: the
// Guard and the sandbox confine a child to its own workspace as they do
// every agent), bounds how many run at once and for how long, keeps the
// background ones, charges what each spent to the parent's run
// (tool.ChargeOf: the run's budget and totals), and ends them all when the
// parent's run ends (Close) or its context does.
//
// Specialised types (Types) are SUBAGENT.md files: the ones upstream ships
// (types/, embedded) and a project's own in .agent/subagent_types/.
//
// This package imports no part of the app, the orchestrator or the CLI:
// the Runner is its seam.
package subagent
