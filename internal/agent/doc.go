// Package agent is the seam between the orchestrator and a team member.
// An Agent is given a Task as plain data — a coordination turn, the final
// presentation, a direct answer or a post-evaluation, with the question,
// the answers shown under their anonymous labels and the rendered prompts
// — and reports Outcomes as plain data: streamed text and reasoning, tool
// calls and their progress, a proposed workflow action, a rejection, and
// one Done with the usage and, when it failed, a coord.Failure built once
// from the error (FailureOf: kind, provider, model, HTTP status,
// retryable). Judging a proposed action is a message: the orchestrator
// puts the Verdict in the task's Inbox, where newer answer sets also
// arrive (restart_policy: inject). Nothing crosses the seam but data, so
// an agent may run in another process or machine.
//
// LLM is our agent: a model and its own tools. Its coordination turn
// builds the request from the task, streams the model's response, runs
// the agent's tools as often as the model calls them (the calls of one
// response in parallel, up to MaxToolSteps steps), and proposes the
// workflow call it ends with; an invalid action gets a corrective message
// and another attempt (MaxAttempts). It also plays the final presentation
// (with the agent's workspace tools, if any, and the client's tools) and
// the post-evaluation.
//
// Agents that bring their own tool loop (coding-agent CLIs) get the
// workflow tools over MCP from package workflowmcp; scripted agents in
// tests implement Agent directly. This package knows nothing about other
// agents or the orchestrator's goroutines.
package agent
