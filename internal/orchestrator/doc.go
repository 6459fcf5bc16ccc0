// Package orchestrator drives a multi-agent run: it feeds the pure
// coordination machine (internal/coord), turns its commands into concurrent
// agent turns (internal/agent), cancels superseded turns at once, enforces
// the per-turn and whole-run deadlines, has the winner present the final
// answer, optionally post-evaluates it, and publishes every step as an
// event (internal/event).
//
// Concurrency shape: one loop goroutine owns the machine; each turn runs in
// its own goroutine with its own cancellable context and talks to the loop
// only through the inbox channel. Nothing else shares state, so the machine
// needs no locks and a cancelled turn can never corrupt it: the machine
// recognises its late results as stale by their turn id.
package orchestrator
