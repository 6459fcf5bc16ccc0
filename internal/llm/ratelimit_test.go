package llm

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestRateLimitSpacesRequestsAtTheConfiguredRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{}
		m := WithRateLimit(inner, NewLimiter(60, 0)) // one a second, burst 1
		start := time.Now()
		for range 3 {
			if err := drain(m); err != nil {
				t.Fatal(err)
			}
		}
		// The first goes at once, the next two wait a second each.
		if got := time.Since(start); got < 2*time.Second || got > 2100*time.Millisecond {
			t.Errorf("3 requests at 60 rpm took %s, want about 2s", got)
		}
	})
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{}
		m := WithRateLimit(inner, NewLimiter(0, 100))                                              // 100 tokens a minute
		big := &Request{Messages: []Message{{Role: RoleUser, Content: string(make([]byte, 400))}}} // ~100 tokens
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, err := range m.Stream(ctx, big) {
			if err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		var got error
		for _, err := range m.Stream(ctx, big) {
			got = err
		}
		// The limiter refuses at once when the wait cannot end before the
		// deadline, rather than sleeping into it; the model is not called.
		if got == nil || inner.calls != 1 {
			t.Errorf("second request over the token budget: err=%v, model calls=%d; want an error and 1 call", got, inner.calls)
		}
		if waited := time.Since(start); waited >= time.Second {
			t.Errorf("waited %s, past the context's deadline", waited)
		}
	})
}

func TestNoLimitsMeansNoWrapper(t *testing.T) {
	inner := &scripted{}
	if WithRateLimit(inner, NewLimiter(0, 0)) != Model(inner) {
		t.Error("a zero limiter should leave the model as is")
	}
}
