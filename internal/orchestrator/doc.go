// Package orchestrator drives a multi-agent run. The rules — who works
// when, what a new answer cancels, who wins, when the winner presents, what
// the deadline, the grace, the budget and a failure do — are all in the
// pure machine of internal/coord; this package is its driver. It feeds the
// machine one input at a time (a turn proposed an action or failed, a call
// ended, a timer fired, the budget was crossed, the caller cancelled) and
// turns the commands it returns into concurrent agent turns
// (internal/agent), cancellations, presentation and evaluation calls and
// timers, publishing every step as an event (internal/event).
//
// Concurrency shape: one loop goroutine (the caller's) owns the machine;
// each turn and each call runs in its own goroutine with its own
// cancellable context and talks to the loop only through the inbox channel;
// timers send into the same inbox. Nothing else shares state, so the
// machine needs no locks and a cancelled turn can never corrupt it: the
// machine recognises its late results as stale by their turn id.
// Options.Trace sees every input and its commands: the run's replay log.
package orchestrator
