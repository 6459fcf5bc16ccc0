package server

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// keepEvents is how many finished runs keep their event broker in memory
// (a bounded history each, see event.Broker) for GET /v1/runs/{id}/events.
const keepEvents = 32

// stateRunning is what the registry reports before a run has its own
// status.json (or when it writes none).
const stateRunning = "running"

// runInfo is what the server remembers of one chat completion's run.
type runInfo struct {
	ID      string
	Model   string
	Created time.Time
	Status  string // running, then the run's own: completed|timeout|failed|interrupted (or rejected: it could not start)
	LogDir  string
	Winner  string
	Ended   time.Time
	View    *event.View // the run's live state; kept after the run for GET /v1/runs/{id}
	// Events is the run's broker, kept after the run (bounded history) for
	// GET /v1/runs/{id}/events.
	Events *event.Broker
}

// registry maps run ids to runs for GET /v1/runs/{id}. A run is added
// once it has a run slot (the client learns its id from the response);
// runs in flight are always kept, and of the finished ones the latest keep.
type registry struct {
	mu       sync.Mutex
	runs     map[string]*runInfo
	finished []string // ids of finished runs, oldest first
	keep     int
}

func newRegistry(keep int) *registry {
	return &registry{runs: map[string]*runInfo{}, keep: keep}
}

// newRunID returns a random id: 16 hex digits.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (g *registry) add(id, model string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs[id] = &runInfo{ID: id, Model: model, Created: now, Status: stateRunning}
}

func (g *registry) update(id string, f func(*runInfo)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.runs[id]; r != nil {
		f(r)
	}
}

// finish records the end of a run and forgets the oldest finished runs
// beyond the limit.
func (g *registry) finish(id, status, winner, logDir string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.runs[id]
	if r == nil {
		return
	}
	r.Status, r.Winner, r.Ended = status, winner, now
	if logDir != "" {
		r.LogDir = logDir
	}
	g.finished = append(g.finished, id)
	// The brokers of older finished runs are let go: their events are in
	// their logs (coordination_events.jsonl), which /events reads then.
	if n := len(g.finished) - keepEvents; n > 0 {
		if old := g.runs[g.finished[n-1]]; old != nil {
			old.Events = nil
		}
	}
	for len(g.finished) > g.keep {
		delete(g.runs, g.finished[0])
		g.finished[0] = ""
		g.finished = g.finished[1:]
	}
}

// get returns a copy of the run's record.
func (g *registry) get(id string) (runInfo, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.runs[id]
	if r == nil {
		return runInfo{}, false
	}
	return *r, true
}

// RunView is one run of the server as another surface shows it (the Web
// UI watches API clients' runs live): Events is its broker while the
// server keeps it (nil before the team is built, and for old runs).
type RunView struct {
	ID, Model, Status, Winner, LogDir string
	Created                           time.Time
	Events                            *event.Broker
}

// Runs returns the runs the server remembers, newest first.
func (s *Server) Runs() []RunView {
	s.runs.mu.Lock()
	out := make([]RunView, 0, len(s.runs.runs))
	for _, r := range s.runs.runs {
		out = append(out, RunView{ID: r.ID, Model: r.Model, Status: r.Status, Winner: r.Winner, LogDir: r.LogDir,
			Created: r.Created, Events: r.Events})
	}
	s.runs.mu.Unlock()
	slices.SortFunc(out, func(a, b RunView) int { return b.Created.Compare(a.Created) })
	return out
}
