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
}

// beforeTurn is agent a's BeforeTurn for the turn being started now, to
// be called from that turn's goroutine. Called on the loop; once a later
// turn of a has asked for its own, this one does nothing.
func (r *runner) beforeTurn(a *Agent) func(shown []coord.Answer) {
	if a.BeforeTurn == nil {
		return func([]coord.Answer) {}
	}
	g := r.views[a.ID]
	if g == nil {
		g = &viewGate{}
		r.views[a.ID] = g
	}
	n := g.gen.Add(1)
	return func(shown []coord.Answer) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.gen.Load() == n {
			a.BeforeTurn(shown)
		}
	}
}
