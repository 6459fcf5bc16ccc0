package llmtest

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/llm"
)

// Collect drains an adapter's stream: the chunks up to the first error, and
// that error.
func Collect(seq iter.Seq2[llm.Chunk, error]) ([]llm.Chunk, error) {
	var out []llm.Chunk
	for c, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// RequireCanceled fails the test unless err is the caller's cancellation,
// reported as such rather than as a provider failure (an *llm.Error).
func RequireCanceled(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if _, ok := errors.AsType[*llm.Error](err); ok {
		t.Errorf("cancellation reported as a provider failure: %v", err)
	}
}

// RequireServerGone fails the test unless gone is closed within five
// seconds: the test server closes it once the client has dropped the
// connection, which a consumer that stops reading must make happen.
func RequireServerGone(t testing.TB, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("server still streaming after the consumer stopped")
	}
}

// RequireLLMError returns err as the *llm.Error it must be, failing the test
// if it is not one.
func RequireLLMError(t testing.TB, err error) *llm.Error {
	t.Helper()
	e, ok := errors.AsType[*llm.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

// RequireCancelMidStream streams req from m, cancels the context as soon
// as a text chunk equal to after arrives, and fails the test unless the
// stream then ends within a second with the caller's cancellation. The
// test server must keep the response open after that chunk.
func RequireCancelMidStream(t testing.TB, m llm.Model, req *llm.Request, after string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	var cancelled time.Time
	for c, e := range m.Stream(ctx, req) {
		if e != nil {
			err = e
			break
		}
		if c.Text == after {
			cancelled = time.Now()
			cancel()
		}
	}
	if cancelled.IsZero() {
		t.Fatalf("the stream ended (%v) before the chunk %q", err, after)
	}
	if elapsed := time.Since(cancelled); elapsed > time.Second {
		t.Errorf("stream returned %v after cancel", elapsed)
	}
	RequireCanceled(t, err)
}

// CutStream is a provider that sends body as an event stream and then
// kills the TCP connection in the middle of the chunked response, as a
// provider that dies mid-answer does.
func CutStream(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
	})
}

// RequireOutcome checks what Collect returned: the chunks must be want;
// with wantErr "" the stream must have ended cleanly, otherwise with a
// retryable *llm.Error whose message contains wantErr.
func RequireOutcome(t testing.TB, got []llm.Chunk, err error, want []llm.Chunk, wantErr string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if wantErr == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if e, ok := errors.AsType[*llm.Error](err); !ok || !e.IsRetryable() || !strings.Contains(e.Message, wantErr) {
		t.Fatalf("error = %v, want a retryable *llm.Error containing %q", err, wantErr)
	}
}

// ErrorResponse is a provider that answers every request with status, the
// given headers and body (as JSON, whatever it holds).
func ErrorResponse(status int, header map[string]string, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
}

// RequireError streams req from m and fails the test unless it yields no
// chunk and then exactly want (its wrapped Err aside).
func RequireError(t testing.TB, m llm.Model, req *llm.Request, want llm.Error) {
	t.Helper()
	chunks, err := Collect(m.Stream(t.Context(), req))
	if len(chunks) != 0 {
		t.Errorf("got chunks before the error: %v", chunks)
	}
	e := RequireLLMError(t, err)
	if diff := cmp.Diff(&want, e, cmpopts.IgnoreFields(llm.Error{}, "Err")); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
