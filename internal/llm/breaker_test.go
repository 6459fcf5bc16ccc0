package llm

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
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

func drain(m Model) error {
	for _, err := range m.Stream(context.Background(), &Request{Model: "m"}) {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestBreakerOpensAfterConsecutiveEndpointFailuresAndFailsFast(t *testing.T) {
	down := &Error{Provider: "p", Status: 0, Retry: true, Message: "cannot reach http://x: connection refused"}
	now := time.Unix(0, 0)
	b := &Breaker{Name: "http://x", Threshold: 3, Cooldown: 10 * time.Second, Now: func() time.Time { return now }}
	inner := &scripted{errs: []error{down, down, down, nil, nil}}
	m := WithBreaker(inner, b, "p")
	for range 2 {
		if err := drain(m); !errors.Is(err, down) {
			t.Fatalf("want the endpoint error, got %v", err)
		}
	}
	// The third failure opens the circuit: it says so, and is final.
	third, _ := errors.AsType[*Error](drain(m))
	if third == nil || third.IsRetryable() || !strings.Contains(third.Message, "connection refused") || !strings.Contains(third.Message, "circuit now open") {
		t.Fatalf("third failure = %+v, want the endpoint error, final, saying the circuit opened", third)
	}
	err := drain(m)
	e, ok := errors.AsType[*Error](err)
	if !ok || e.IsRetryable() || !strings.Contains(e.Message, "circuit open") || inner.calls != 3 {
		t.Fatalf("open circuit: err=%v calls=%d; want a non-retryable fast failure without a call", err, inner.calls)
	}
	now = now.Add(11 * time.Second) // cooldown over: one trial goes through and closes it
	if err := drain(m); err != nil || inner.calls != 4 {
		t.Fatalf("half-open trial: err=%v calls=%d", err, inner.calls)
	}
	if err := drain(m); err != nil || inner.calls != 5 {
		t.Fatalf("closed again: err=%v calls=%d", err, inner.calls)
	}
}

func TestBreakerIgnoresRequestErrors(t *testing.T) {
	bad := &Error{Provider: "p", Status: 400, Message: "bad request"}
	b := &Breaker{Name: "x", Threshold: 2}
	inner := &scripted{errs: []error{bad, bad, bad}}
	m := WithBreaker(inner, b, "p")
	for range 3 {
		_ = drain(m)
	}
	if inner.calls != 3 {
		t.Errorf("a 400 opened the circuit: %d calls", inner.calls)
	}
}

func TestRetryStopsAtAnOpenCircuit(t *testing.T) {
	down := &Error{Provider: "p", Status: 503, Retry: true, Message: "unavailable"}
	b := &Breaker{Name: "x", Threshold: 2, Cooldown: time.Hour}
	inner := &scripted{errs: []error{down, down, down, down}}
	var slept []time.Duration
	m := WithRetry(WithBreaker(inner, b, "p"), RetryPolicy{MaxAttempts: 4, Sleep: func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}})
	err := drain(m)
	if inner.calls != 2 || len(slept) != 1 || !strings.Contains(err.Error(), "circuit now open") {
		t.Fatalf("calls=%d sleeps=%d err=%v; want 2 real calls and no wait after the failure that opened the circuit", inner.calls, len(slept), err)
	}
}
