package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
)

// ErrCircuitOpen is what every error caused by an open circuit breaker
// satisfies (errors.Is): the request was held back and never sent, so the
// error says nothing about the agent. The orchestrator does not count such
// a turn against the agent's failure budget.
var ErrCircuitOpen = errors.New("circuit open")

// CircuitOpenError says why a request was held back: its model failed
// Failures times in a row, and the breaker lets the next trial request
// through in Wait (0: a trial is under way).
type CircuitOpenError struct {
	Name     string // the circuit: endpoint and model
	Failures int
	Last     error // the failure that opened it
	Wait     time.Duration
}

func (e *CircuitOpenError) Error() string {
	next := "a trial request is under way"
	if e.Wait > 0 {
		next = "next trial in " + e.Wait.Round(time.Second).String()
	}
	return fmt.Sprintf("circuit open for %s after %d failures in a row (last: %v); %s", e.Name, e.Failures, e.Last, next)
}

// Is makes errors.Is(err, ErrCircuitOpen) hold.
func (e *CircuitOpenError) Is(target error) bool { return target == ErrCircuitOpen }

// BreakerPolicy says when a circuit breaker opens and how long it holds
// requests back. Zero fields take the defaults.
type BreakerPolicy struct {
	Threshold int           // consecutive failed requests that open it; default 3
	Cooldown  time.Duration // how long it stays open before a trial; default 30s
	// MaxWait bounds how long a request waits at an open circuit for the
	// trial to let it through; default 60s.
	MaxWait time.Duration
}

// Breaker is a circuit breaker for one model on one endpoint. After
// Threshold consecutive failed requests (unreachable, 5xx, overloaded,
// stalled) it opens: requests wait, without touching the network, until
// Cooldown has passed; then one trial request goes out, and its outcome
// closes the circuit (the waiting requests go) or opens it again (they
// fail with ErrCircuitOpen).
//
// Why per model and not per endpoint: one base URL (OpenRouter, a vLLM
// server) often serves many models, each backed by a different upstream, so
// one model's 500s say nothing about its neighbours. A dead endpoint is
// still learnt quickly: each model's breaker opens after its own few
// failures.
//
// Why a request waits instead of failing at once: a failure it did not
// cause would cost its agent a turn, and a restarted turn would only meet
// the open circuit again. Waiting costs nothing, and the trial tells.
type Breaker struct {
	Name string // shown in errors: endpoint and model
	BreakerPolicy

	mu       sync.Mutex
	failures int
	openedAt time.Time
	opens    int  // times the circuit opened: a waiter sees a failed trial
	trial    bool // a half-open trial request is in flight
	lastErr  error
	changed  chan struct{} // closed at every outcome, for the waiters
}

func (b *Breaker) threshold() int { return cmp.Or(max(b.Threshold, 0), 3) }

func (b *Breaker) cooldown() time.Duration { return cmp.Or(max(b.Cooldown, 0), 30*time.Second) }

func (b *Breaker) maxWait() time.Duration { return cmp.Or(max(b.MaxWait, 0), 60*time.Second) }

// Open returns why the circuit holds requests back now, or nil when it
// is closed.
func (b *Breaker) Open() *CircuitOpenError {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold() {
		return nil
	}
	return b.openErrLocked()
}

func (b *Breaker) openErrLocked() *CircuitOpenError {
	wait := max(b.cooldown()-time.Since(b.openedAt), 0)
	return &CircuitOpenError{Name: b.Name, Failures: b.failures, Last: b.lastErr, Wait: wait}
}

// enter waits until a request may go out: at once while the circuit is
// closed; while it is open, until this request becomes the half-open
// trial, or another request's trial closes the circuit. It gives up with a
// *CircuitOpenError when that trial fails or MaxWait has passed, and with
// ctx's error (joined to the circuit's) when ctx ends first. trial says
// whether this request is the trial.
func (b *Breaker) enter(ctx context.Context) (trial bool, err error) {
	var giveUp <-chan time.Time
	b.mu.Lock()
	opens := b.opens
	for {
		if b.failures < b.threshold() {
			b.mu.Unlock()
			return false, nil
		}
		open := b.openErrLocked()
		if open.Wait == 0 && !b.trial {
			b.trial = true
			b.mu.Unlock()
			return true, nil
		}
		if b.opens != opens { // the trial this request waited for failed
			b.mu.Unlock()
			return false, open
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()

		if giveUp == nil {
			t := time.NewTimer(b.maxWait())
			defer t.Stop()
			giveUp = t.C
		}
		// Until the cooldown ends (the trial may go), an outcome comes in,
		// or the wait is over.
		cooled := time.NewTimer(max(open.Wait, 0))
		if open.Wait == 0 {
			cooled.Stop() // a trial is under way: its outcome will tell
		}
		var stop error // why this request stops waiting, if it does
		select {
		case <-ctx.Done():
			stop = ctx.Err()
		case <-giveUp:
			stop = ErrCircuitOpen
		case <-changed:
		case <-cooled.C:
		}
		cooled.Stop()
		b.mu.Lock()
		if stop == nil || b.failures < b.threshold() {
			continue
		}
		open = b.openErrLocked()
		b.mu.Unlock()
		if stop == ErrCircuitOpen {
			return false, open
		}
		return false, fmt.Errorf("%w while waiting at an open circuit: %w", stop, open)
	}
}

// record notes a request's outcome (nil for success); trial says whether
// the request was the half-open trial.
func (b *Breaker) record(err error, trial bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.notifyLocked()
	if trial {
		b.trial = false
	}
	if err == nil || !endpointFailure(err) {
		b.failures = 0
		return
	}
	b.failures++
	b.lastErr = err
	// It opens at the threshold and again at a failed trial; requests that
	// were already in flight when it opened do not push the trial back.
	if b.failures == b.threshold() || (trial && b.failures > b.threshold()) {
		b.openedAt = time.Now()
		b.opens++
	}
}

// release ends a request without a verdict (it was cancelled).
func (b *Breaker) release(trial bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trial = false
		b.notifyLocked()
	}
}

func (b *Breaker) notifyLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// endpointFailure says whether an error is the endpoint's fault (as opposed
// to this request's, like a 400, or the caller's, like a cancellation).
// A request the breaker held back never reached the endpoint.
func endpointFailure(err error) bool {
	if errors.Is(err, ErrCircuitOpen) {
		return false
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return false
	}
	return e.Status == 0 || e.Status >= 500
}

// WithBreaker guards m with b. It belongs outside WithRetry: a request
// counts once, after its retries, so a burst of transient failures (a
// connection reset by an overloaded listener, one 503) is retried with
// backoff instead of opening the circuit for the whole team.
// provider and model name the requests it holds back (model when the
// request names none).
func WithBreaker(m Model, b *Breaker, provider, model string) Model {
	return &breakerModel{m: m, b: b, provider: provider, model: model}
}

type breakerModel struct {
	m               Model
	b               *Breaker
	provider, model string
}

func (bm *breakerModel) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		trial, err := bm.b.enter(ctx)
		if err != nil {
			e := &Error{Provider: bm.provider, Model: cmp.Or(req.Model, bm.model), Message: err.Error(), Err: err}
			if open, ok := errors.AsType[*CircuitOpenError](err); ok {
				e.After = open.Wait
			}
			yield(Chunk{}, e)
			return
		}
		settled := false
		defer func() {
			switch {
			case settled:
			case ctx.Err() != nil:
				bm.b.release(trial) // cancelled by us: says nothing about the endpoint
			default:
				bm.b.record(nil, trial)
			}
		}()
		for c, err := range bm.m.Stream(ctx, req) {
			if err != nil && !settled && (ctx.Err() == nil || endpointFailure(err)) {
				settled = true
				bm.b.record(err, trial)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}
