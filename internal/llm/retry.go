package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how WithRetry retries. Zero fields take the defaults.
type RetryPolicy struct {
	MaxAttempts int           // total tries including the first; default 4
	BaseDelay   time.Duration // first backoff ceiling; default 500ms
	MaxDelay    time.Duration // backoff ceiling; default 20s
	// MaxRetryAfter caps a wait the provider asked for; default 60s.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done; default a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, when set, is told about each retry before its wait
	// (attempt is the 1-based try that failed). ctx is the request's: a
	// model shared by several runs reports into the run that retried.
	OnRetry func(ctx context.Context, attempt int, err error, delay time.Duration)
}

// WithRetry wraps m so that a failed request is sent again, with backoff,
// while nothing has reached the consumer yet.
//
// Why only then: once a chunk went out, the consumer has shown or acted on
// part of an answer, and a silent second request would splice two different
// answers together. A later failure is returned as is, and the orchestrator
// restarts the turn where the user can see it.
func WithRetry(m Model, p RetryPolicy) Model {
	p.MaxAttempts = cmp.Or(max(p.MaxAttempts, 0), 4)
	p.BaseDelay = cmp.Or(max(p.BaseDelay, 0), 500*time.Millisecond)
	p.MaxDelay = cmp.Or(max(p.MaxDelay, 0), 20*time.Second)
	p.MaxRetryAfter = cmp.Or(max(p.MaxRetryAfter, 0), 60*time.Second)
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return &retryModel{m: m, p: p}
}

type retryModel struct {
	m Model
	p RetryPolicy
}

func (r *retryModel) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for attempt := 1; ; attempt++ {
			var failure error
			sent := false
			for c, err := range r.m.Stream(ctx, req) {
				if err != nil {
					failure = err
					break
				}
				sent = true
				if !yield(c, nil) {
					return
				}
			}
			if failure == nil {
				return
			}
			e, ok := errors.AsType[*Error](failure)
			if sent || !ok || !e.IsRetryable() || attempt >= r.p.MaxAttempts || ctx.Err() != nil {
				yield(Chunk{}, failure)
				return
			}
			d := r.p.delay(attempt, e)
			if r.p.OnRetry != nil {
				r.p.OnRetry(ctx, attempt, failure, d)
			}
			if err := r.p.Sleep(ctx, d); err != nil {
				// Both stay inspectable: errors.Is(err, context.Canceled)
				// and errors.As(err, **Error).
				yield(Chunk{}, fmt.Errorf("%w (while waiting to retry: %w)", err, failure))
				return
			}
		}
	}
}

// delay is the wait before the next try: the provider's retry-after when it
// gave one (capped), else exponential backoff with full jitter, so agents that
// hit the same limit at once do not come back at once.
func (p RetryPolicy) delay(attempt int, e *Error) time.Duration {
	if after := e.RetryAfter(); after > 0 {
		return min(after, p.MaxRetryAfter)
	}
	ceiling := p.MaxDelay
	if attempt-1 < 32 {
		ceiling = min(p.BaseDelay<<(attempt-1), p.MaxDelay)
		if ceiling <= 0 { // overflow
			ceiling = p.MaxDelay
		}
	}
	return rand.N(ceiling + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
