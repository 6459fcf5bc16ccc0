package server

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/runlog"
)

// Defaults of Deps.
const (
	DefaultMaxConcurrent = 4
	DefaultMaxQueue      = 64
	DefaultMaxBodyBytes  = 1 << 20
	DefaultBodyTimeout   = 60 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultStopWait      = 5 * time.Second
	DefaultKeepRuns      = 1000
)

// DefaultModel is the model id that runs the server's default config.
const DefaultModel = "massgen"

// RunRequest is one run the server asks for.
type RunRequest struct {
	// Config is the config to run (a file or @examples/NAME, from
	// Deps.Configs); Model is a single model to run in quick mode. Both
	// empty: the runner's default (the `massgen` model).
	Config, Model string
	Question      string
	History       []llm.Message
	Tools         []llm.ToolDef
	// Params are the client's sampling parameters (temperature, top_p,
	// max_tokens). The Runner applies them to single-model runs only:
	// a config's agents keep the parameters their config gives them.
	Params map[string]any
	// Started, when set, is called once the run has started (before its
	// first event), with its log directory ("" without logs) and its live
	// view, which GET /v1/runs/{id} serves (nil: the server reads the
	// run's status.json instead).
	Started func(logDir string, view *event.View)
	// Observe, when set, is called for every event of the run except the
	// agents' coordination deltas (event.TextDelta, event.ReasoningDelta;
	// event.FinalDelta is included), in order, from one goroutine, and
	// never after the Runner has returned. It may block (a slow client):
	// the run does not wait for it, only droppable deltas are then lost.
	Observe func(event.Event)
}

// RunResult is how a run ended.
type RunResult struct {
	Status    string // completed|timeout|failed|interrupted
	Final     string
	Winner    string
	LogDir    string
	ToolCalls []llm.ToolCall // client tool calls made by the winner
	Usage     llm.Usage      // summed over agents
	// Err says why the run did not complete. A failed run whose Err holds
	// an *llm.CircuitOpenError is answered 503 with Retry-After.
	Err error
	// Fallback says why Final is the winner's stored answer rather than a
	// presentation (GraceExpired: the presentation ran out of time).
	Fallback     string
	GraceExpired bool
}

// Runner runs one orchestration. It returns an error only when the run
// could not start: an *Error chooses the HTTP status (400 bad config, 404
// unknown model); any other error is a 500. Cancelling ctx (the client
// went away, or the server is stopping) must cancel every model request
// of the run at once.
type Runner func(ctx context.Context, r RunRequest) (*RunResult, error)

// Deps is what the server needs. Zero values take the defaults above,
// except MaxQueue, which is literal (0 = no queue: a request that finds
// every slot taken gets 429 at once).
type Deps struct {
	Run Runner
	// Models are the ids GET /v1/models lists; default: "massgen" and the
	// keys of Configs.
	Models []string
	// Configs routes model ids "massgen/<name>" to the Config of a run
	// (a file path or "@examples/NAME").
	Configs map[string]string
	Version string
	APIKey  string // when set, /v1/* needs "Authorization: Bearer <APIKey>"
	// CORSOrigins are the web origins browsers may call the API from
	// ("https://app.example.com", or "*" for any); none by default.
	CORSOrigins []string
	// ListenHost is the host the server listens on (--host; "" is
	// loopback): it decides which Host headers requests may carry
	// (hostcheck.go), so that a DNS-rebound web page is refused.
	ListenHost string
	// AllowedHosts are more host names requests may be addressed to (a
	// reverse proxy's public name); "*" accepts any Host.
	AllowedHosts  []string
	MaxConcurrent int   // runs at once
	MaxQueue      int   // requests waiting for a run slot, FIFO
	MaxBodyBytes  int64 // request body limit; larger bodies get 413
	// BodyTimeout bounds the reading of a request body: a client that
	// stalls mid-body gets 408 rather than holding its handler (and
	// Shutdown) for as long as it keeps the connection open.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write to a client (one SSE chunk, or a
	// whole response): a client that stops reading is dropped and its run
	// cancelled.
	WriteTimeout time.Duration
	// StopWait is how long Shutdown waits for runs to end once it has
	// cancelled them at the end of its grace period.
	StopWait time.Duration
	KeepRuns int // finished runs GET /v1/runs/{id} remembers
	Logger   *slog.Logger
	Now      func() time.Time
}

// Server is the OpenAI-compatible HTTP API. Create it with New, serve
// Handler with an http.Server, and call Shutdown before shutting that
// http.Server down.
type Server struct {
	d       Deps
	log     *slog.Logger
	adm     *admission
	hosts   hostPolicy
	runs    *registry
	handler http.Handler
	created int64

	// stop cancels every run: the end of Shutdown's grace period.
	stopCtx context.Context
	stop    context.CancelCauseFunc

	mu       sync.Mutex
	closing  bool
	active   int // chat completion requests in the handler
	idle     chan struct{}
	idleOnce sync.Once
}

var errStopped = errors.New("the server is shutting down")

// New returns a server; d.Run is required.
func New(d Deps) *Server {
	if d.Run == nil {
		panic("server: Deps.Run is required")
	}
	d.MaxConcurrent = cmp.Or(max(d.MaxConcurrent, 0), DefaultMaxConcurrent)
	d.MaxQueue = max(d.MaxQueue, 0)
	d.MaxBodyBytes = cmp.Or(max(d.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	d.WriteTimeout = cmp.Or(max(d.WriteTimeout, 0), DefaultWriteTimeout)
	d.BodyTimeout = cmp.Or(max(d.BodyTimeout, 0), DefaultBodyTimeout)
	d.StopWait = cmp.Or(max(d.StopWait, 0), DefaultStopWait)
	d.KeepRuns = cmp.Or(max(d.KeepRuns, 0), DefaultKeepRuns)
	d.Version = cmp.Or(d.Version, "dev")
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Models == nil {
		d.Models = append([]string{DefaultModel}, slices.Sorted(maps.Keys(d.Configs))...)
	}
	s := &Server{d: d, log: d.Logger, adm: newAdmission(d.MaxConcurrent, d.MaxQueue),
		hosts: newHostPolicy(d.ListenHost, d.AllowedHosts),
		runs:  newRegistry(d.KeepRuns), created: d.Now().Unix(), idle: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.stopCtx, s.stop = context.WithCancelCause(context.Background())

	mux := http.NewServeMux()
	mux.HandleFunc("/health", s.health)
	mux.HandleFunc("/v1/models", s.models)
	mux.HandleFunc("/v1/models/{id...}", s.model)
	mux.HandleFunc("/v1/chat/completions", s.runRoute(decodeChat, func(req *chatRequest) format {
		return chatFormat{includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	}))
	mux.HandleFunc("/v1/responses", s.runRoute(decodeResponses, func(*chatRequest) format { return responsesFormat{} }))
	mux.HandleFunc("/v1/runs/{id}", s.run)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, NewError(http.StatusNotFound, "unknown_url", "Unknown route: %s %s", r.Method, r.URL.Path))
	})
	s.handler = s.middleware(mux)
	return s
}

// Handler returns the HTTP handler with every route.
func (s *Server) Handler() http.Handler { return s.handler }

// middleware refuses requests addressed to a foreign Host (hostcheck.go),
// turns requests away while shutting down, checks the API key on /v1/
// routes and logs every request at debug level.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
		}()
		if !s.hosts.allows(r.Host) {
			s.log.Warn("request refused: Host not allowed (see --allowed-hosts)", "host", r.Host, "method", r.Method, "path", r.URL.Path)
			writeError(sw, hostError(r.Host))
			return
		}
		if s.cors(sw, r) {
			return // a preflight, answered
		}
		if s.isClosing() {
			writeError(sw, errShuttingDown)
			return
		}
		if s.d.APIKey != "" && strings.HasPrefix(r.URL.Path, "/v1/") {
			if e := s.checkKey(r); e != nil {
				writeError(sw, e)
				return
			}
		}
		next.ServeHTTP(sw, r)
	})
}

// cors adds the CORS headers for an allowed Origin and answers a preflight
// (reporting true); a request from any other origin gets no CORS header,
// so browsers keep it from the page. A preflight carries no credentials:
// it is answered before the API key check.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.d.CORSOrigins) == 0 {
		return false
	}
	allow := ""
	for _, o := range s.d.CORSOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			allow = origin
			break
		}
	}
	w.Header().Add("Vary", "Origin")
	if allow == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", allow)
	h.Set("Access-Control-Expose-Headers", "X-Massgen-Run-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", cmp.Or(r.Header.Get("Access-Control-Request-Headers"), "Authorization, Content-Type"))
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// statusWriter remembers the status for the access log. Unwrap keeps
// http.ResponseController (Flush, write deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) checkKey(r *http.Request) *Error {
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if auth == "" || !ok {
		return &Error{Status: http.StatusUnauthorized, Code: "missing_api_key", Type: "invalid_request_error",
			Message: "You didn't provide an API key. Send it in an Authorization header: 'Authorization: Bearer YOUR_KEY'."}
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.d.APIKey)) != 1 {
		return &Error{Status: http.StatusUnauthorized, Code: "invalid_api_key", Type: "invalid_request_error",
			Message: "Incorrect API key provided."}
	}
	return nil
}

// methods answers 405 unless r uses one of the allowed methods.
func methods(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	if slices.Contains(allowed, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, NewError(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s; use %s.",
		r.Method, r.URL.Path, strings.Join(allowed, " or ")))
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, asError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// GET /health
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	running, queued := s.adm.load()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "service": "massgen-server", "version": s.d.Version,
		"running": running, "queued": queued})
}

// GET /v1/models
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	list := modelList{Object: "list", Data: make([]modelObject, 0, len(s.d.Models))}
	for _, id := range s.d.Models {
		list.Data = append(list.Data, s.modelObject(id))
	}
	writeJSON(w, http.StatusOK, list)
}

// GET /v1/models/{id}
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	id := r.PathValue("id")
	if !slices.Contains(s.d.Models, id) {
		writeError(w, NewError(http.StatusNotFound, "model_not_found", "The model '%s' does not exist.", id))
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject(id))
}

func (s *Server) modelObject(id string) modelObject {
	return modelObject{ID: id, Object: "model", Created: s.created, OwnedBy: "massgen"}
}

// GET /v1/runs/{id}: the run's state in status.json's shape, from the
// run's view in memory (runs of this process, logs or not); for a run
// without one, its status.json, or a summary of what the registry knows.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	info, ok := s.runs.get(r.PathValue("id"))
	if !ok {
		writeError(w, NewError(http.StatusNotFound, "run_not_found", "No run with id '%s' (unknown, or forgotten: the server keeps the latest %d finished runs).",
			r.PathValue("id"), s.d.KeepRuns))
		return
	}
	if info.View != nil {
		now := s.d.Now()
		writeJSON(w, http.StatusOK, runlog.StatusOf(info.View.Snapshot(now), info.LogDir, now, runlog.ThisProcess()))
		return
	}
	if info.LogDir != "" {
		if b, err := os.ReadFile(filepath.Join(info.LogDir, "status.json")); err == nil && json.Valid(b) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
	}
	v := runlog.StatusView{
		Meta:    runlog.StatusMeta{LogDir: info.LogDir, StartedAt: info.Created, UpdatedAt: s.d.Now(), Status: info.Status},
		Results: runlog.ResultsView{Winner: info.Winner},
	}
	writeJSON(w, http.StatusOK, v)
}

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
	complete(w http.ResponseWriter, res *RunResult, info *massgenInfo, model string, start time.Time)
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
	rr, e := req.runRequest()
	if e != nil {
		writeError(w, e)
		return
	}
	model := cmp.Or(req.Model, DefaultModel)
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
	rr.Started = func(logDir string, view *event.View) {
		s.runs.update(id, func(ri *runInfo) { ri.LogDir, ri.View = logDir, view })
	}
	s.log.Info("run started", "run", id, "model", model, "stream", req.Stream, "api", r.URL.Path)

	var err error
	if req.Stream {
		res, err = s.stream(ctx, cancel, w, f, rr, id, model, start)
	} else {
		res, err = s.complete(ctx, w, f, rr, id, model, start)
	}
	switch {
	case err != nil:
		status = "rejected"
		s.log.Info("run not started", "run", id, "model", model, "error", err)
	case res != nil:
		status = res.Status
		s.log.Info("run finished", "run", id, "model", model, "status", res.Status, "winner", res.Winner,
			"duration", s.d.Now().Sub(start).Round(time.Millisecond), "tokens", res.Usage.Total())
	}
}

// route sets the config or model of the run from the request's model id.
func (s *Server) route(model string, rr *RunRequest) *Error {
	switch {
	case model == DefaultModel:
	case strings.HasPrefix(model, DefaultModel+"/"):
		cfg, ok := s.d.Configs[model]
		if !ok {
			names := slices.Sorted(maps.Keys(s.d.Configs))
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

// complete runs without streaming and writes the outcome at once.
func (s *Server) complete(ctx context.Context, w http.ResponseWriter, f format, rr RunRequest, id, model string, start time.Time) (*RunResult, error) {
	res, err := s.runOnce(ctx, rr)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.d.WriteTimeout))
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	if err != nil {
		writeError(w, asError(err))
		return nil, err
	}
	if e := s.runFailure(ctx, res); e != nil {
		writeError(w, e)
		return res, nil
	}
	f.complete(w, res, s.info(id, res), model, start)
	return res, nil
}

// stream runs with streaming: events go to the format's stream as they
// happen.
func (s *Server) stream(ctx context.Context, cancel context.CancelCauseFunc, w http.ResponseWriter, f format,
	rr RunRequest, id, model string, start time.Time) (*RunResult, error) {
	st := f.stream(w, id, model, start, s.d.WriteTimeout, func() { cancel(errClientGone) })
	started := rr.Started
	rr.Started = func(logDir string, view *event.View) {
		started(logDir, view)
		st.start(view)
	}
	rr.Observe = st.observe
	res, err := s.runOnce(ctx, rr)
	if err != nil {
		if st.abandon() {
			writeError(w, asError(err))
		} else {
			st.fail(asError(err))
		}
		return nil, err
	}
	if e := s.runFailure(ctx, res); e != nil {
		st.fail(e)
		return res, nil
	}
	st.finish(res, s.info(id, res))
	return res, nil
}

var errClientGone = errors.New("the client went away")

// info is the `massgen` object of a completed run: the runner's verdict,
// and what the run's view knows (the winner, the tally, the answers, the
// cost) when the runner shared its view.
func (s *Server) info(id string, res *RunResult) *massgenInfo {
	info := &massgenInfo{RunID: id, Winner: res.Winner, Status: res.Status, LogDir: res.LogDir,
		Fallback: res.Fallback, GraceExpired: res.GraceExpired}
	if ri, ok := s.runs.get(id); ok && ri.View != nil {
		snap := ri.View.Snapshot(s.d.Now())
		info.Winner = cmp.Or(snap.Winner, info.Winner)
		info.Votes, info.Answers, info.CostUSD = snap.Tally, len(snap.Answers), snap.Usage.CostUSD
	}
	return info
}

// runFailure is the error for a run that did not complete, nil otherwise.
func (s *Server) runFailure(ctx context.Context, res *RunResult) *Error {
	why := "no answer"
	if res.Err != nil {
		why = res.Err.Error()
	}
	switch res.Status {
	case "completed":
		return nil
	case "failed":
		// The team's circuit breakers hold its models back: say when a
		// trial goes through rather than blame the server.
		if open, ok := errors.AsType[*llm.CircuitOpenError](res.Err); ok {
			return &Error{Status: http.StatusServiceUnavailable, Code: "circuit_open", RetryAfter: max(open.Wait, time.Second),
				Message: "The run failed and its model endpoints are held back by an open circuit breaker; retry later: " + why, Err: res.Err}
		}
	case "timeout":
		return &Error{Status: http.StatusGatewayTimeout, Code: "run_timeout", Message: "The run timed out without an answer: " + why, Err: res.Err}
	case "interrupted":
		if errors.Is(context.Cause(ctx), errStopped) {
			return errShuttingDown
		}
		return &Error{Status: 499, Code: "cancelled", Type: "server_error", Message: "The run was cancelled: " + why, Err: res.Err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "run_failed", Message: "The run failed: " + why, Err: res.Err}
}
