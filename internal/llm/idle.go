package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// This file watches the bytes of model requests: a response that stops
// sending (before its headers, after them, or mid-stream) fails after the
// idle timeout instead of holding a run until its deadline, and callers
// can see how long an agent's request has been silent.
//
// Why bytes and not chunks: adapters emit a tool call only once its
// arguments are whole, so a long answer streamed as new_answer arguments
// yields no chunk for minutes while bytes flow steadily. Only the transport
// sees those bytes, so the watch lives there (WatchTransport, which
// HTTPClient uses), switched on per request through the context.

// StallError is the failure of a request whose response sent no byte for
// Idle.
type StallError struct {
	Idle    time.Duration
	Headers bool // whether the response headers had arrived
}

func (e *StallError) Error() string {
	where := "waiting for the response headers"
	if e.Headers {
		where = "mid-response"
	}
	return fmt.Sprintf("no bytes for %g s %s (timeout_settings.stream_idle_timeout_seconds)", e.Idle.Seconds(), where)
}

// Timeout reports true: a stall is a timeout.
func (e *StallError) Timeout() bool { return true }

type idleKey struct{}

// idleWatch is one Stream call's idle settings, and what the transport
// found.
type idleWatch struct {
	idle    time.Duration
	whole   bool // headers come with the whole answer: no limit before them
	stalled atomic.Pointer[StallError]
}

type wholeKey struct{}

// WholeResponse marks ctx's requests as non-streaming: their response
// headers come only once the model has written its whole answer, which
// may take longer than the idle timeout. The watch starts at the headers.
func WholeResponse(ctx context.Context) context.Context {
	return context.WithValue(ctx, wholeKey{}, true)
}

// WithIdleTimeout wraps m so that a request whose response sends no byte
// for d fails with an *Error (not retryable) wrapping a *StallError, which
// names the provider, the model and the silence. d <= 0 returns m. The
// requests must go through WatchTransport (HTTPClient does).
func WithIdleTimeout(m Model, d time.Duration) Model {
	if d <= 0 {
		return m
	}
	return &idleModel{m: m, idle: d}
}

type idleModel struct {
	m    Model
	idle time.Duration
}

func (im *idleModel) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		w := &idleWatch{idle: im.idle}
		for c, err := range im.m.Stream(context.WithValue(ctx, idleKey{}, w), req) {
			if err != nil && ctx.Err() == nil {
				if s := w.stalled.Load(); s != nil {
					err = stalled(err, req, s)
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// stalled is the error of a request the watch cut: the adapter saw only a
// cancelled or broken exchange, the watch knows why.
func stalled(err error, req *Request, s *StallError) *Error {
	e := &Error{Model: req.Model, Message: "stalled: " + s.Error(), Err: s}
	if inner, ok := errors.AsType[*Error](err); ok {
		e.Provider, e.Model = inner.Provider, cmp.Or(inner.Model, e.Model)
	}
	return e
}

// Activity follows the bytes of the requests made with a context (see
// WithActivity), for a status display: how long since the request in
// flight last received a byte. It is safe for concurrent use.
type Activity struct {
	base     time.Time    // monotonic origin of last
	last     atomic.Int64 // since base: the last byte, or the request's start
	inFlight atomic.Int32
}

// NewActivity returns an Activity with no request in flight.
func NewActivity() *Activity { return &Activity{base: time.Now()} }

type activityKey struct{}

// WithActivity returns ctx whose model requests report to a.
func WithActivity(ctx context.Context, a *Activity) context.Context {
	return context.WithValue(ctx, activityKey{}, a)
}

// SinceLastByte is the time since the request in flight last received a
// byte (since it was sent, before its first byte); ok is false when no
// request is in flight.
func (a *Activity) SinceLastByte() (d time.Duration, ok bool) {
	if a.inFlight.Load() <= 0 {
		return 0, false
	}
	return time.Since(a.base) - time.Duration(a.last.Load()), true
}

func (a *Activity) touch() { a.last.Store(int64(time.Since(a.base))) }

// WatchTransport returns next watching the requests whose context asks for
// it (WithIdleTimeout, WithActivity); other requests pass through as they
// are. HTTPClient uses it; give an adapter's own client one too.
func WatchTransport(next http.RoundTripper) http.RoundTripper {
	return watchTransport{next}
}

type watchTransport struct{ next http.RoundTripper }

func (t watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(idleKey{}).(*idleWatch)
	a, _ := req.Context().Value(activityKey{}).(*Activity)
	if w == nil && a == nil {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	x := &exchange{w: w, a: a, start: time.Now(), cancel: cancel}
	if a != nil {
		a.inFlight.Add(1)
		a.touch()
	}
	whole, _ := req.Context().Value(wholeKey{}).(bool)
	if w != nil && !whole {
		x.arm()
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		x.end()
		cancel()
		if s := x.stalled(); s != nil {
			return nil, s
		}
		return nil, err
	}
	x.touch()
	x.headers.Store(true)
	if w != nil && whole {
		x.arm()
	}
	resp.Body = &watchedBody{rc: resp.Body, x: x}
	return resp, nil
}

// exchange is one watched request.
type exchange struct {
	w       *idleWatch // nil: no timeout
	a       *Activity  // nil: nobody follows it
	start   time.Time
	last    atomic.Int64 // since start
	headers atomic.Bool
	cancel  context.CancelFunc

	mu    sync.Mutex
	timer *time.Timer
	done  bool
	stall *StallError
}

func (x *exchange) touch() {
	x.last.Store(int64(time.Since(x.start)))
	if x.a != nil {
		x.a.touch()
	}
}

// arm starts the idle timer.
func (x *exchange) arm() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		x.timer = time.AfterFunc(x.w.idle, x.check)
	}
}

// check runs when the timer fires: it cuts the request if it has been
// silent for the whole timeout, else sets the timer for the rest.
// Resetting a timer per check instead of per byte keeps Read cheap.
func (x *exchange) check() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	silent := time.Since(x.start) - time.Duration(x.last.Load())
	if silent < x.w.idle {
		x.timer.Reset(x.w.idle - silent)
		return
	}
	x.stall = &StallError{Idle: x.w.idle, Headers: x.headers.Load()}
	x.w.stalled.Store(x.stall)
	x.cancel()
}

func (x *exchange) stalled() *StallError {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stall
}

// end stops watching; it is idempotent.
func (x *exchange) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	if x.timer != nil {
		x.timer.Stop()
	}
	if x.a != nil {
		x.a.inFlight.Add(-1)
	}
}

// watchedBody records each read, and ends the watch with the body.
type watchedBody struct {
	rc io.ReadCloser
	x  *exchange
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.x.touch()
	}
	if err != nil {
		b.x.end()
		if s := b.x.stalled(); s != nil {
			err = s // the cut is the watch's: say why
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.x.end()
	err := b.rc.Close()
	b.x.cancel()
	return err
}

// CloseIdleConnections passes http.Client.CloseIdleConnections on.
func (t watchTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
