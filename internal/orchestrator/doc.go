// Package orchestrator drives a multi-agent run. The rules — who works
// when, what a new answer cancels, who wins, when the winner presents, what
// the deadline, the grace, the budget and a failure do — are all in the
// pure machine of internal/coord; this package is its driver. It feeds the
// machine one input at a time (a turn proposed an action or failed, a call
// ended, a timer fired, the budget was crossed, the caller cancelled) and
// carries out the commands it returns: agent tasks, cancellations, timers.
//
// Agents are driven through agent.Agent only: a task as data in, outcomes
// as data out, verdicts and newer answer sets as messages into the task's
// inbox. The orchestrator never asks which kind of agent it drives (the
// LLM agent, a CLI agent over workflowmcp, a scripted one in tests).
//
// One log, the truth: every step — the input and the commands it gave —
// goes to Options.Trace (the run's replay log) before anything acts on it,
// and the step's decision events are derived from it by one pure function
// (derive.go), so a replay of the log (DeriveLog, massgen replay) gives the
// same decisions and the same events, and a run killed at any point is
// resumed from its log (coord.Machine.Carried) without asking any agent
// again for what it gave.
//
// Concurrency shape: one loop goroutine (the caller's) owns the machine;
// each task runs in its own goroutine with its own cancellable context and
// talks to the loop only through the inbox channel; timers send into the
// same inbox. Nothing else shares state, so the machine needs no locks and
// a cancelled turn can never corrupt it: the machine recognises its late
// results as stale by their turn id.
package orchestrator
