package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
)

// Breaker is a circuit breaker for one provider endpoint, shared by every
// model that talks to it. After Threshold consecutive endpoint failures
// (unreachable, 5xx, overloaded) it opens: requests fail at once, without
// touching the network, until Cooldown has passed; then one trial request
// is let through, and its outcome closes or reopens the circuit.
//
// Why: a dead endpoint otherwise costs every agent on it a full retry
// schedule per turn, for as many turns as its failure budget allows. With
// the breaker the team learns once, and the run goes on without it in
// about a second.
type Breaker struct {
	Name      string        // shown in errors, e.g. the base URL
	Threshold int           // consecutive failures that open it; default 3
	Cooldown  time.Duration // how long it stays open; default 30s
	Now       func() time.Time

	mu       sync.Mutex
	failures int
	openedAt time.Time
	trial    bool // a half-open trial request is in flight
	lastErr  error
}

func (b *Breaker) threshold() int {
	if b.Threshold > 0 {
		return b.Threshold
	}
	return 3
}

func (b *Breaker) cooldown() time.Duration {
	if b.Cooldown > 0 {
		return b.Cooldown
	}
	return 30 * time.Second
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// allow reports whether a request may go out, and an error explaining why not.
func (b *Breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold() {
		return nil
	}
	if wait := b.cooldown() - b.now().Sub(b.openedAt); wait > 0 || b.trial {
		return fmt.Errorf("circuit open for %s: %d failures in a row (last: %v); not calling it for %s",
			b.Name, b.failures, b.lastErr, max(wait, 0).Round(time.Second))
	}
	b.trial = true // half-open: let one request find out
	return nil
}

// record notes a request's outcome (nil for success) and reports whether
// this outcome opened the circuit.
func (b *Breaker) record(err error) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trial = false
	if err == nil || !endpointFailure(err) {
		b.failures = 0
		return false
	}
	b.failures++
	b.lastErr = err
	if b.failures >= b.threshold() {
		b.openedAt = b.now()
		return true
	}
	return false
}

// release ends a half-open trial without a verdict.
func (b *Breaker) release() {
	b.mu.Lock()
	b.trial = false
	b.mu.Unlock()
}

// endpointFailure says whether an error is the endpoint's fault (as opposed
// to this request's, like a 400, or the caller's, like a cancellation).
func endpointFailure(err error) bool {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return false
	}
	return e.Status == 0 || e.Status >= 500
}

// WithBreaker guards m with b. Errors from an open circuit are *Error values
// that are not retryable, so WithRetry (wrapped around this) gives up at once.
func WithBreaker(m Model, b *Breaker, provider string) Model {
	return &breakerModel{m: m, b: b, provider: provider}
}

type breakerModel struct {
	m        Model
	b        *Breaker
	provider string
}

func (bm *breakerModel) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		if err := bm.b.allow(); err != nil {
			yield(Chunk{}, &Error{Provider: bm.provider, Model: req.Model, Message: err.Error()})
			return
		}
		recorded := false
		defer func() {
			if !recorded {
				if ctx.Err() != nil {
					bm.b.release() // cancelled by us: says nothing about the endpoint
				} else {
					bm.b.record(nil)
				}
			}
		}()
		for c, err := range bm.m.Stream(ctx, req) {
			if err != nil && !recorded && (ctx.Err() == nil || endpointFailure(err)) {
				recorded = true
				if bm.b.record(err) {
					// This failure opened the circuit: say so, and stop the
					// retry schedule now rather than after one more wait.
					err = opened(err)
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// opened marks an endpoint error as final because the circuit just opened.
func opened(err error) error {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return err
	}
	cp := *e
	cp.Retry = false
	cp.Message = cmpOrMsg(e) + " (circuit now open: not retrying this endpoint for a while)"
	return &cp
}

func cmpOrMsg(e *Error) string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return "failed"
}
