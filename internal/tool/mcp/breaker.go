package mcp

import (
	"fmt"
	"sync"
	"time"
)

// breaker pauses a server that keeps failing: after max failures in a row
// (lost connections, timeouts; not a tool's own error results, which say
// something about the arguments, not the server) calls are refused at once
// for cooldown, then one is let through to try again. A success closes it.
type breaker struct {
	mu       sync.Mutex
	max      int
	cooldown time.Duration
	fails    int
	openTill time.Time
	last     error
}

// allow returns nil when a call may go ahead, or why not.
func (b *breaker) allow(now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fails >= b.max && now.Before(b.openTill) {
		return fmt.Errorf("paused after %d failures in a row, until %s (last: %v)", b.fails, b.openTill.Format(time.TimeOnly), b.last)
	}
	return nil
}

func (b *breaker) record(now time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		b.fails, b.last = 0, nil
		return
	}
	b.fails++
	b.last = err
	if b.fails >= b.max {
		b.openTill = now.Add(b.cooldown)
	}
}
