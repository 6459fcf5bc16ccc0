package server

import (
	"context"
	"errors"
	"slices"
	"sync"
)

var (
	errQueueFull = errors.New("server: run slots and queue are full")
	errClosed    = errors.New("server: shutting down")
)

// admission bounds concurrent runs: at most max run at once, at most
// maxQueue more wait for a slot in arrival order (FIFO), and the rest are
// turned away at once. A waiter whose context ends (the client went away)
// leaves the queue; a slot is handed straight from a finishing run to the
// head of the queue, so a newcomer cannot overtake a waiter.
type admission struct {
	mu       sync.Mutex
	max      int
	maxQueue int
	running  int
	queue    []*waiter
	closed   bool
}

type waiter struct {
	ready chan struct{} // closed when done is set
	done  bool          // settled: granted (err == nil) or rejected
	err   error
}

func newAdmission(max, maxQueue int) *admission {
	return &admission{max: max, maxQueue: maxQueue}
}

// acquire takes a run slot, waiting in the queue if need be. It fails at
// once with errQueueFull or errClosed, or with ctx's error when the caller
// gives up while queued. On success the caller must call release.
func (a *admission) acquire(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errClosed
	}
	if a.running < a.max && len(a.queue) == 0 {
		a.running++
		a.mu.Unlock()
		return nil
	}
	if len(a.queue) >= a.maxQueue {
		a.mu.Unlock()
		return errQueueFull
	}
	w := &waiter{ready: make(chan struct{})}
	a.queue = append(a.queue, w)
	a.mu.Unlock()

	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
	}
	a.mu.Lock()
	if w.done {
		// Settled while we were giving up: a granted slot goes to the next waiter.
		granted := w.err == nil
		a.mu.Unlock()
		if granted {
			a.release()
		}
		return ctx.Err()
	}
	if i := slices.Index(a.queue, w); i >= 0 {
		a.queue = slices.Delete(a.queue, i, i+1)
	}
	a.mu.Unlock()
	return ctx.Err()
}

// release gives the slot to the longest waiter, or frees it.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) > 0 {
		w := a.queue[0]
		a.queue[0] = nil
		a.queue = a.queue[1:]
		w.done = true
		close(w.ready)
		return
	}
	a.running--
}

// close turns every waiter and every later caller away with errClosed.
// Runs holding a slot keep it until they release it.
func (a *admission) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for _, w := range a.queue {
		w.done, w.err = true, errClosed
		close(w.ready)
	}
	a.queue = nil
}

// load reports the runs holding a slot and the requests waiting for one.
func (a *admission) load() (running, queued int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, len(a.queue)
}
