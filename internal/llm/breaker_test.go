package llm

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// scripted fails or succeeds per call, counting calls.
type scripted struct {
	errs  []error // per call; nil = success
	calls int
}

func (s *scripted) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		i := s.calls
		s.calls++
		if i < len(s.errs) && s.errs[i] != nil {
			yield(Chunk{}, s.errs[i])
			return
		}
		yield(Chunk{Kind: ChunkDone, FinishReason: "stop"}, nil)
	}
}

func drain(m Model) error { return drainCtx(context.Background(), m) }

func drainCtx(ctx context.Context, m Model) error {
	for _, err := range m.Stream(ctx, &Request{Model: "m"}) {
		if err != nil {
			return err
		}
	}
	return nil
}

var down = &Error{Provider: "p", Status: 0, Retry: true, Message: "cannot reach http://x: connection refused"}

// openBreaker returns a breaker opened by threshold failures of inner.
func openBreaker(t *testing.T, p BreakerPolicy) *Breaker {
	t.Helper()
	b := &Breaker{Name: "http://x model m", BreakerPolicy: p}
	m := WithBreaker(&scripted{errs: []error{down, down, down}}, b, "p", "m")
	for range b.threshold() {
		if err := drain(m); !errors.Is(err, down) {
			t.Fatalf("want the endpoint error, got %v", err)
		}
	}
	if b.Open() == nil {
		t.Fatal("the circuit did not open")
	}
	return b
}

func TestBreakerOpensAfterConsecutiveFailuresAndHoldsRequestsUntilTheTrial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Breaker{Name: "http://x model m", BreakerPolicy: BreakerPolicy{Threshold: 3, Cooldown: 10 * time.Second}}
		inner := &scripted{errs: []error{down, down, down, nil, nil}}
		m := WithBreaker(inner, b, "p", "m")
		for range 3 {
			// The failures that open it are the endpoint's own, counted
			// against the agent as usual.
			if err := drain(m); !errors.Is(err, down) || errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("want the endpoint error, got %v", err)
			}
		}
		open := b.Open()
		if open == nil || open.Wait != 10*time.Second || !strings.Contains(open.Error(), "connection refused") {
			t.Fatalf("Open() = %v; want the circuit open for 10s, naming the last failure", open)
		}
		// The next request waits for the cooldown, without a call, and is
		// then the trial that closes the circuit.
		start := time.Now()
		if err := drain(m); err != nil || inner.calls != 4 {
			t.Fatalf("trial: err=%v calls=%d", err, inner.calls)
		}
		if waited := time.Since(start); waited != 10*time.Second {
			t.Errorf("waited %v at the open circuit, want the 10s cooldown", waited)
		}
		if err := drain(m); err != nil || inner.calls != 5 || b.Open() != nil {
			t.Fatalf("closed again: err=%v calls=%d open=%v", err, inner.calls, b.Open())
		}
	})
}

// gate is a Model whose calls block until released, then fail with err
// (nil: succeed).
type gate struct {
	calls   atomic.Int64
	started chan struct{}
	release chan error
}

func newGate() *gate { return &gate{started: make(chan struct{}, 16), release: make(chan error)} }

func (g *gate) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		g.calls.Add(1)
		g.started <- struct{}{}
		if err := <-g.release; err != nil {
			yield(Chunk{}, err)
			return
		}
		yield(Chunk{Kind: ChunkDone, FinishReason: "stop"}, nil)
	}
}

func TestBreakerWaitersFollowTheTrialsOutcome(t *testing.T) {
	for _, trialFails := range []bool{true, false} {
		name := map[bool]string{true: "failed trial: waiters fail with ErrCircuitOpen", false: "successful trial: waiters go"}[trialFails]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := openBreaker(t, BreakerPolicy{Threshold: 1, Cooldown: 10 * time.Second})
				g := newGate()
				m := WithBreaker(g, b, "p", "m")
				errs := make([]error, 3)
				var wg sync.WaitGroup
				for i := range errs {
					wg.Go(func() { errs[i] = drain(m) })
				}
				<-g.started // after the cooldown, one request is the trial
				synctest.Wait()
				if n := g.calls.Load(); n != 1 {
					t.Fatalf("%d requests went out while the trial was under way, want 1", n)
				}
				if trialFails {
					g.release <- down
				} else {
					close(g.release) // this trial and every request after it succeed
				}
				wg.Wait()
				var trials, held int
				for _, err := range errs {
					switch {
					case err == nil:
					case errors.Is(err, ErrCircuitOpen):
						held++
						if e, _ := errors.AsType[*Error](err); e == nil || e.RetryAfter() != 10*time.Second || e.Model != "m" {
							t.Errorf("held-back error %#v; want an *Error for model m with RetryAfter 10s", err)
						}
					case errors.Is(err, down):
						trials++
					default:
						t.Errorf("unexpected error %v", err)
					}
				}
				if trialFails && (trials != 1 || held != 2 || g.calls.Load() != 1) {
					t.Errorf("trial failed: %d trial errors, %d held back, %d calls; want 1, 2, 1", trials, held, g.calls.Load())
				}
				if !trialFails && (trials+held != 0 || g.calls.Load() != 3) {
					t.Errorf("trial succeeded: errors %v, %d calls; want all 3 sent and successful", errs, g.calls.Load())
				}
			})
		})
	}
}

func TestBreakerWaitIsBoundedByMaxWaitAndByTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := openBreaker(t, BreakerPolicy{Threshold: 1, Cooldown: time.Hour, MaxWait: 5 * time.Second})
		inner := &scripted{}
		m := WithBreaker(inner, b, "p", "m")
		start := time.Now()
		err := drain(m)
		if !errors.Is(err, ErrCircuitOpen) || time.Since(start) != 5*time.Second || inner.calls != 0 {
			t.Fatalf("err=%v after %v with %d calls; want ErrCircuitOpen after MaxWait (5s), no call", err, time.Since(start), inner.calls)
		}
		if open, _ := errors.AsType[*CircuitOpenError](err); open == nil || open.Wait != time.Hour-5*time.Second {
			t.Errorf("CircuitOpenError = %+v; want the 59m55s left until the trial", open)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = drainCtx(ctx, m)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrCircuitOpen) || inner.calls != 0 {
			t.Fatalf("err=%v calls=%d; want the context's error, also marked ErrCircuitOpen, no call", err, inner.calls)
		}
	})
}

func TestBreakerCancelledTrialLetsTheNextRequestTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := openBreaker(t, BreakerPolicy{Threshold: 1, Cooldown: time.Second})
		g := newGate()
		m := WithBreaker(g, b, "p", "m")
		ctx, cancel := context.WithCancel(context.Background())
		trial := make(chan error)
		go func() { trial <- drainCtx(ctx, m) }()
		<-g.started
		waiter := make(chan error)
		go func() { waiter <- drain(m) }()
		synctest.Wait()
		cancel()
		g.release <- context.Canceled // the adapter's answer to a cancellation
		<-trial
		<-g.started // the waiter is the new trial
		g.release <- nil
		if err := <-waiter; err != nil || b.Open() != nil {
			t.Fatalf("after a cancelled trial: err=%v open=%v; want the waiter's trial to close the circuit", err, b.Open())
		}
	})
}

func TestBreakerIgnoresRequestErrors(t *testing.T) {
	bad := &Error{Provider: "p", Status: 400, Message: "bad request"}
	b := &Breaker{Name: "x", BreakerPolicy: BreakerPolicy{Threshold: 2}}
	inner := &scripted{errs: []error{bad, bad, bad}}
	m := WithBreaker(inner, b, "p", "m")
	for range 3 {
		_ = drain(m)
	}
	if inner.calls != 3 || b.Open() != nil {
		t.Errorf("a 400 opened the circuit: %d calls, open %v", inner.calls, b.Open())
	}
}

func TestBreakerCountsARequestOnceAfterItsRetries(t *testing.T) {
	unavailable := &Error{Provider: "p", Status: 503, Retry: true, Message: "unavailable"}
	noWait := RetryPolicy{MaxAttempts: 4, Sleep: func(context.Context, time.Duration) error { return nil }}
	b := &Breaker{Name: "x", BreakerPolicy: BreakerPolicy{Threshold: 2, Cooldown: time.Hour}}

	// Three transient failures, then success: retried, never counted.
	inner := &scripted{errs: []error{unavailable, unavailable, unavailable}}
	if err := drain(WithBreaker(WithRetry(inner, noWait), b, "p", "m")); err != nil || b.Open() != nil {
		t.Fatalf("err=%v open=%v; want transient failures retried without touching the circuit", err, b.Open())
	}
	// A request whose every try failed counts once.
	inner = &scripted{errs: []error{unavailable, unavailable, unavailable, unavailable}}
	err := drain(WithBreaker(WithRetry(inner, noWait), b, "p", "m"))
	if !errors.Is(err, unavailable) || inner.calls != 4 || b.Open() != nil {
		t.Fatalf("err=%v calls=%d open=%v; want the whole retry schedule, counted as one failure", err, inner.calls, b.Open())
	}
}
