package llm

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// step is one item a scripted attempt yields.
type step struct {
	c   Chunk
	err error
}

// script is a Model whose n-th call yields attempts[n] (the last one repeats).
type script struct {
	attempts [][]step
	calls    int
}

func (s *script) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		a := s.attempts[min(s.calls, len(s.attempts)-1)]
		s.calls++
		for _, st := range a {
			if !yield(st.c, st.err) || st.err != nil {
				return
			}
		}
	}
}

var (
	text     = step{c: Chunk{Kind: ChunkText, Text: "ok"}}
	done     = step{c: Chunk{Kind: ChunkDone, FinishReason: "stop"}}
	success  = []step{text, done}
	fail     = func(e *Error) []step { return []step{{err: e}} }
	tooMany  = func(after time.Duration) *Error { return &Error{Provider: "p", Status: 429, Retry: true, After: after} }
	overload = &Error{Provider: "p", Status: 500, Retry: true}
	badKey   = &Error{Provider: "p", Status: 401}
)

// recorder is a RetryPolicy.Sleep that records instead of waiting.
type recorder struct{ delays []time.Duration }

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.delays = append(r.delays, d)
	return ctx.Err()
}

func run(ctx context.Context, m Model) ([]Chunk, error) {
	var out []Chunk
	for c, err := range m.Stream(ctx, &Request{}) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func TestWithRetry(t *testing.T) {
	tests := []struct {
		name        string
		attempts    [][]step
		maxAttempts int
		wantCalls   int
		wantDelays  []time.Duration
		wantChunks  []Chunk
		wantErr     error
	}{
		{
			name:       "429 is retried after the wait the provider asked for",
			attempts:   [][]step{fail(tooMany(3 * time.Second)), fail(tooMany(2 * time.Second)), success},
			wantCalls:  3,
			wantDelays: []time.Duration{3 * time.Second, 2 * time.Second},
			wantChunks: []Chunk{text.c, done.c},
		},
		{
			name:       "a long retry-after is capped",
			attempts:   [][]step{fail(tooMany(10 * time.Minute)), success},
			wantCalls:  2,
			wantDelays: []time.Duration{60 * time.Second},
			wantChunks: []Chunk{text.c, done.c},
		},
		{
			name:        "gives up after MaxAttempts",
			attempts:    [][]step{fail(tooMany(time.Second))},
			maxAttempts: 3,
			wantCalls:   3,
			wantDelays:  []time.Duration{time.Second, time.Second},
			wantErr:     tooMany(time.Second),
		},
		{
			name:      "401 is not retried",
			attempts:  [][]step{fail(badKey), success},
			wantCalls: 1,
			wantErr:   badKey,
		},
		{
			name:       "a failure after the first chunk is returned as is",
			attempts:   [][]step{{text, {err: overload}}, success},
			wantCalls:  1,
			wantChunks: []Chunk{text.c},
			wantErr:    overload,
		},
		{
			name:      "an error that is not an *Error is not retried",
			attempts:  [][]step{{{err: errors.New("boom")}}, success},
			wantCalls: 1,
			wantErr:   errors.New("boom"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{attempts: tt.attempts}
			rec := &recorder{}
			m := WithRetry(s, RetryPolicy{MaxAttempts: tt.maxAttempts, Sleep: rec.sleep})
			chunks, err := run(t.Context(), m)
			if diff := cmp.Diff(tt.wantChunks, chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if (err == nil) != (tt.wantErr == nil) || err != nil && err.Error() != tt.wantErr.Error() {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if s.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", s.calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantDelays, rec.delays); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryBackoffIsJitteredAndBounded(t *testing.T) {
	s := &script{attempts: [][]step{fail(overload)}}
	rec := &recorder{}
	var notified []int
	m := WithRetry(s, RetryPolicy{
		MaxAttempts: 6, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Sleep: rec.sleep,
		OnRetry: func(_ context.Context, attempt int, err error, d time.Duration) { notified = append(notified, attempt) },
	})
	if _, err := run(t.Context(), m); !errors.Is(err, overload) {
		t.Fatalf("error = %v, want the last failure", err)
	}
	ceilings := []time.Duration{100, 200, 400, 800, 1000}
	if len(rec.delays) != len(ceilings) {
		t.Fatalf("delays = %v, want %d of them", rec.delays, len(ceilings))
	}
	for i, d := range rec.delays {
		if d < 0 || d > ceilings[i]*time.Millisecond {
			t.Errorf("delay %d = %v, want within [0, %v]", i, d, ceilings[i]*time.Millisecond)
		}
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5}, notified); diff != "" {
		t.Errorf("OnRetry attempts (-want +got):\n%s", diff)
	}
}

func TestRetryStopsWhenContextIsCancelled(t *testing.T) {
	t.Run("during the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := &script{attempts: [][]step{fail(overload), success}}
		m := WithRetry(s, RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}})
		_, err := run(ctx, m)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		if !errors.Is(err, overload) {
			t.Errorf("error = %v, want the provider failure kept", err)
		}
		if s.calls != 1 {
			t.Errorf("calls = %d, want 1", s.calls)
		}
	})
	t.Run("with the default timer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		s := &script{attempts: [][]step{fail(tooMany(time.Hour))}}
		start := time.Now()
		_, err := run(ctx, WithRetry(s, RetryPolicy{MaxRetryAfter: time.Hour}))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %v, want context.DeadlineExceeded", err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("waited %v after the context ended", elapsed)
		}
	})
	t.Run("before the retry", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := &script{attempts: [][]step{fail(overload), success}}
		rec := &recorder{}
		m := WithRetry(s, RetryPolicy{Sleep: rec.sleep})
		cancel()
		if _, err := run(ctx, m); !errors.Is(err, overload) {
			t.Errorf("error = %v, want the failure", err)
		}
		if s.calls != 1 || len(rec.delays) != 0 {
			t.Errorf("calls = %d, sleeps = %d; want 1, 0", s.calls, len(rec.delays))
		}
	})
}

func TestRetryConsumerBreakStopsEverything(t *testing.T) {
	s := &script{attempts: [][]step{success}}
	m := WithRetry(s, RetryPolicy{})
	for range m.Stream(t.Context(), &Request{}) {
		break
	}
	if s.calls != 1 {
		t.Errorf("calls = %d, want 1", s.calls)
	}
}
