package orchestrator

import (
	"sync"
	"sync/atomic"

	"github.com/massgen/massgen/internal/coord"
)

// An agent's BeforeTurn lays out its view of the others' files: file
// system work that grows with their workspaces and the team, so it runs
// in the turn's own goroutine, not on the loop, where it would hold up
// every verdict. Turns of one agent come one after another, but a
// superseded turn's goroutine may still be on its way: a gate per agent
// lets only the newest turn's layout run, one at a time.

// viewGate orders one agent's BeforeTurn calls.
type viewGate struct {
	mu  sync.Mutex
	gen atomic.Uint64 // the newest turn's number
	// round is set when a coordination turn asks for its BeforeRound and
	// cleared when it runs: an update injected before the turn's own
	// layout ran (which it then skips) runs it in its place.
	round atomic.Bool
}

// beforeTurn is agent a's BeforeTurn for the turn being started now, to
// be called from that turn's goroutine. Called on the loop; once a later
// turn of a has asked for its own, this one does nothing.
func (r *runner) beforeTurn(a *Agent) func(shown []coord.Answer) {
	return r.beforeRound(a, false)
}

// beforeRound is beforeTurn, calling the agent's BeforeRound first when
// round is set (a coordination turn's start) or such a turn's call was
// skipped for this one.
func (r *runner) beforeRound(a *Agent, round bool) func(shown []coord.Answer) {
	if a.BeforeTurn == nil && (!round || a.BeforeRound == nil) {
		return func([]coord.Answer) {}
	}
	g := r.views[a.ID]
	if g == nil {
		g = &viewGate{}
		r.views[a.ID] = g
	}
	if round && a.BeforeRound != nil {
		g.round.Store(true)
	}
	n := g.gen.Add(1)
	return func(shown []coord.Answer) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.gen.Load() != n {
			return
		}
		if a.BeforeRound != nil && g.round.Swap(false) {
			a.BeforeRound()
		}
		if a.BeforeTurn != nil {
			a.BeforeTurn(shown)
		}
	}
}
