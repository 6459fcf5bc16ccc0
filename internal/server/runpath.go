package server

// The path of a request that runs the team, shared by chat completions
// and Responses: decode, route to a config or model, run, answer (whole or
// streamed), and map how the run ended to an HTTP status.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/telemetry"
)

// runRoute is the handler of an API that runs the team (POST
// /v1/chat/completions, POST /v1/responses): decode reads the request
// into a chatRequest, formatOf chooses how the run is written back.
func (s *Server) runRoute(decode func(http.ResponseWriter, *http.Request, int64) (*chatRequest, *Error),
	formatOf func(*chatRequest) format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !methods(w, r, http.MethodPost) {
			return
		}
		if e := contentTypeError(r); e != nil {
			writeError(w, e)
			return
		}
		if !s.enter() {
			writeError(w, errShuttingDown)
			return
		}
		defer s.leave()
		// A deadline for the body alone: http.Server's ReadTimeout would
		// also cut long streamed responses short on HTTP/2. It stays set
		// when the body failed, so that net/http does not wait for the
		// rest of it (to keep the connection) before sending the error.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.d.BodyTimeout))
		req, e := decode(w, r, s.d.MaxBodyBytes)
		if e != nil {
			writeError(w, e)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		s.serveRun(w, r, req, formatOf(req))
	}
}

// format is how one API writes a run: whole, once it has completed, or
// streamed while it happens.
type format interface {
	// complete writes a whole response; events are the run's, as a stream
	// would have had them (without the final answer's deltas), when
	// replays says the format builds its response from them.
	complete(w http.ResponseWriter, res *RunResult, info *massgenInfo, model string, start time.Time, events []event.Event)
	replays() bool
	stream(w http.ResponseWriter, id, model string, start time.Time, timeout time.Duration, gone func()) runStream
}

// runStream writes one run as it happens. observe is called from the
// runner's observer goroutine, the others from the handler's: a stream
// orders them itself.
type runStream interface {
	start(*event.View)               // headers and the opening events, once; the run's view (nil: none)
	observe(event.Event)             // one event of the run
	abandon() bool                   // end before starting (false if started)
	finish(*RunResult, *massgenInfo) // a completed run
	fail(*Error)                     // a run that ended without an answer
}

// serveRun runs one request, whichever API it came from: it routes the
// model, waits for a run slot, registers the run for GET /v1/runs/{id},
// and writes the outcome in the request's format.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request, req *chatRequest, f format) {
	if req.resp != nil && req.resp.req.Background {
		s.acceptBackground(w, r.Context(), req)
		return
	}
	rr, e := req.runRequest()
	if e != nil {
		writeError(w, e)
		return
	}
	model := cmp.Or(req.Model, DefaultModel)
	rr.TraceParent, rr.TraceState = traceContext(r.Header)
	if e := s.route(model, &rr); e != nil {
		writeError(w, e)
		return
	}

	if err := s.adm.acquire(r.Context()); err != nil {
		switch err {
		case errQueueFull:
			writeError(w, errQueueFullHTTP)
		case errClosed:
			writeError(w, errShuttingDown)
		} // else the client went away while queued
		return
	}
	defer s.adm.release()

	id := newRunID()
	start := s.d.Now()
	s.runs.add(id, model, start)
	w.Header().Set("X-Massgen-Run-Id", id)
	status := "rejected" // the run could not start
	var res *RunResult
	defer func() {
		var winner, logDir string
		if res != nil {
			winner, logDir = res.Winner, res.LogDir
		}
		s.runs.finish(id, status, winner, logDir, s.d.Now())
	}()

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	defer context.AfterFunc(s.stopCtx, func() { cancel(errStopped) })()
	rr.Started = func(logDir string, view *event.View, events *event.Broker) {
		s.runs.update(id, func(ri *runInfo) { ri.LogDir, ri.View, ri.Events = logDir, view, events })
	}
	s.log.Info("run started", "run", id, "model", model, "stream", req.Stream, "api", r.URL.Path)

	var err error
	c := &call{rr: rr, id: id, model: model, start: start, notes: req.notes}
	if req.Stream {
		res, err = s.stream(ctx, cancel, w, f, c)
	} else {
		res, err = s.complete(ctx, w, f, c)
	}
	switch {
	case err != nil:
		status = "rejected"
		s.log.Info("run not started", "run", id, "model", model, "error", err)
	case res != nil:
		status = string(res.Status)
		s.log.Info("run finished", "run", id, "model", model, "status", res.Status, "winner", res.Winner,
			"duration", s.d.Now().Sub(start).Round(time.Millisecond), "tokens", res.Usage.Total())
	}
}

// route sets the config or model of the run from the request's model id.
func (s *Server) route(model string, rr *RunRequest) *Error {
	switch {
	case model == DefaultModel:
	case strings.HasPrefix(model, DefaultModel+"/"):
		configs := s.d.ConfigSource()
		cfg, ok := configs[model]
		if !ok {
			names := slices.Sorted(maps.Keys(configs))
			return &Error{Status: http.StatusNotFound, Param: "model", Code: "model_not_found",
				Message: fmt.Sprintf("The model '%s' does not exist. massgen models: %s, %s.", model, DefaultModel, strings.Join(names, ", "))}
		}
		rr.Config = cfg
	default:
		rr.Model = model
	}
	return nil
}

// runOnce calls the Runner; a Runner that returns neither a result nor an
// error is a bug, reported as a 500.
func (s *Server) runOnce(ctx context.Context, rr RunRequest) (*RunResult, error) {
	res, err := s.d.Run(ctx, rr)
	if res == nil && err == nil {
		err = errors.New("server: the runner returned no result")
	}
	return res, err
}

// call is one run being served.
type call struct {
	rr        RunRequest
	id, model string
	start     time.Time
	notes     []string // for the massgen object
}

// complete runs without streaming and writes the outcome at once.
func (s *Server) complete(ctx context.Context, w http.ResponseWriter, f format, c *call) (*RunResult, error) {
	var mu sync.Mutex
	var events []event.Event
	if f.replays() {
		c.rr.Observe = func(e event.Event) {
			if e.Type() == event.TypeFinalDelta {
				return // the final answer holds them
			}
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	}
	res, err := s.runOnce(ctx, c.rr)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.d.WriteTimeout))
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	if err != nil {
		writeError(w, asError(err))
		return nil, err
	}
	if e := s.runFailure(ctx, res, c.rr.Output); e != nil {
		writeError(w, e)
		return res, nil
	}
	mu.Lock()
	defer mu.Unlock()
	f.complete(w, res, s.info(c, res), c.model, c.start, events)
	return res, nil
}

// stream runs with streaming: events go to the format's stream as they
// happen.
func (s *Server) stream(ctx context.Context, cancel context.CancelCauseFunc, w http.ResponseWriter, f format, c *call) (*RunResult, error) {
	st := f.stream(w, c.id, c.model, c.start, s.d.WriteTimeout, func() { cancel(errClientGone) })
	started := c.rr.Started
	c.rr.Started = func(logDir string, view *event.View, events *event.Broker) {
		started(logDir, view, events)
		st.start(view)
	}
	c.rr.Observe = st.observe
	res, err := s.runOnce(ctx, c.rr)
	if err != nil {
		if st.abandon() {
			writeError(w, asError(err))
		} else {
			st.fail(asError(err))
		}
		return nil, err
	}
	if e := s.runFailure(ctx, res, c.rr.Output); e != nil {
		st.fail(e)
		return res, nil
	}
	st.finish(res, s.info(c, res))
	return res, nil
}

var errClientGone = errors.New("the client went away")

// info is the `massgen` object of a completed run: the runner's verdict,
// and what the run's view knows (the winner, the tally, the answers, the
// cost) when the runner shared its view.
func (s *Server) info(c *call, res *RunResult) *massgenInfo {
	info := &massgenInfo{RunID: c.id, Winner: res.Winner, Status: res.Status, LogDir: res.LogDir,
		Fallback: res.Fallback, GraceExpired: res.GraceExpired, Notes: c.notes}
	if ri, ok := s.runs.get(c.id); ok && ri.View != nil {
		snap := ri.View.Snapshot(s.d.Now())
		info.Winner = cmp.Or(snap.Winner, info.Winner)
		info.Votes, info.Answers, info.CostUSD = snap.Tally, len(snap.Answers), snap.Usage.CostUSD
	}
	return info
}

// runFailure is the error for a run that did not complete, or whose final
// answer is not in the format the client asked for (out; the answer is
// then the JSON without a code fence around it); nil otherwise.
func (s *Server) runFailure(ctx context.Context, res *RunResult, out *OutputFormat) *Error {
	why := "no answer"
	if res.Err != nil {
		why = res.Err.Error()
	}
	switch res.Status {
	case coord.RunCompleted:
		if out == nil || len(res.ToolCalls) > 0 {
			return nil
		}
		text, e := out.check(res.Final)
		if e != nil {
			return e
		}
		res.Final = text
		return nil
	case coord.RunFailed:
		// The team's circuit breakers hold its models back: say when a
		// trial goes through rather than blame the server.
		// The app wraps a failed run's error with the breaker that holds
		// its models back; or every agent's last failure says so.
		wait, open := allCircuitsOpen(res.Failures)
		if co, ok := errors.AsType[*llm.CircuitOpenError](res.Err); ok {
			wait, open = co.Wait, true
		}
		if open {
			return &Error{Status: http.StatusServiceUnavailable, Code: "circuit_open", RetryAfter: max(wait, time.Second),
				Message: "The run failed and its model endpoints are held back by an open circuit breaker; retry later: " + why,
				Err:     res.Err, Failures: res.Failures}
		}
	case coord.RunTimedOut:
		return &Error{Status: http.StatusGatewayTimeout, Code: "run_timeout", Message: "The run timed out without an answer: " + why, Err: res.Err}
	case coord.RunInterrupted:
		if errors.Is(context.Cause(ctx), errStopped) {
			return errShuttingDown
		}
		return &Error{Status: 499, Code: "cancelled", Type: "server_error", Message: "The run was cancelled: " + why, Err: res.Err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "run_failed", Message: "The run failed: " + why, Err: res.Err,
		Failures: res.Failures}
}

// allCircuitsOpen reports whether every agent of a failed run left because
// its endpoint's breaker was open, and the longest wait one of them named.
func allCircuitsOpen(fs []coord.Failure) (wait time.Duration, open bool) {
	for _, f := range fs {
		if f.Kind != coord.FailCircuitOpen {
			return 0, false
		}
		wait = max(wait, time.Duration(f.RetryAfterSeconds*float64(time.Second)))
	}
	return wait, len(fs) > 0
}

// traceContext is the W3C trace context of a request (traceparent and
// tracestate), or nothing when traceparent is absent or malformed.
func traceContext(h http.Header) (parent, state string) {
	tp := strings.TrimSpace(h.Get("traceparent"))
	if tp == "" || !telemetry.ValidParent(tp) {
		return "", ""
	}
	return tp, strings.TrimSpace(h.Get("tracestate"))
}
