package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxBody bounds a request body; coordination prompts with several long
// answers stay far below it.
const maxBody = 64 << 20

// errStatusFault marks an exchange answered with a scripted error status.
var errStatusFault = errors.New("llmsim: status fault")

// Server is a simulated LLM provider speaking four wire formats (see the
// package documentation). It is safe for
// concurrent use; create it with New, serve it with Start (or mount
// Handler), and always Close it.
type Server struct {
	sc      *Scenario
	handler http.Handler
	log     requestLog
	logf    func(format string, args ...any) // per-request log lines (Serve); nil = none
	// leanLog drops Messages from records: a long-running `sim serve` would
	// otherwise keep every conversation it was sent.
	leanLog bool

	// ctx is cancelled by Close, which aborts every in-flight exchange.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex // guards everything below
	models    map[string]*modelState
	closed    bool
	inflight  int
	drained   chan struct{} // closed when inflight drops to 0 after Close
	srv       *http.Server
	serveDone chan struct{}
	closeErr  error
	closing   sync.Once
}

// New returns a simulator for the scenario. sc may be nil (default policy
// for every model); it must not be modified afterwards.
func New(sc *Scenario) *Server {
	if sc == nil {
		sc = &Scenario{}
	}
	s := &Server{sc: sc, models: make(map[string]*modelState)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s
}

// DropMessages stops the request log from keeping message contents (records
// keep everything else). Long-running servers and benchmarks use it: the
// copies cost memory and CPU that a real provider would not spend on our
// side of the wire. Call it before Start.
func (s *Server) DropMessages() { s.leanLog = true }

// KeepRequests bounds the request log to about the last n records (at
// least n, at most 2n), for servers that run indefinitely; n ≤ 0 keeps
// everything (the default). Call it before Start.
func (s *Server) KeepRequests(n int) { s.log.keep = max(n, 0) }

// Handler returns the simulator's HTTP handler, for mounting it on a server
// of your own (httptest.NewServer(s.Handler()), with base URL srv.URL+"/v1").
// Close still aborts its in-flight exchanges.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on addr ("127.0.0.1:0" for an ephemeral port) and serves in
// the background. It returns the base URL to give an OpenAI client, e.g.
// "http://127.0.0.1:41234/v1"; the Anthropic and Gemini SDKs add their own
// version prefix and take the URL without "/v1".
func (s *Server) Start(addr string) (baseURL string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("llmsim: server is closed")
	}
	if s.srv != nil {
		return "", errors.New("llmsim: server already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("llmsim: %w", err)
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// Request contexts derive from the server's, so cancelling it in
		// Close reaches every handler.
		BaseContext: func(net.Listener) context.Context { return s.ctx },
	}
	done := make(chan struct{})
	s.srv, s.serveDone = srv, done
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return "http://" + ln.Addr().String() + "/v1", nil
}

// Close stops the listener, aborts in-flight streams (their records end
// "cancelled") and returns once every handler and the serving goroutine have
// returned. It is idempotent.
func (s *Server) Close() error {
	s.closing.Do(func() {
		s.mu.Lock()
		s.closed = true
		var drained chan struct{}
		if s.inflight > 0 {
			drained = make(chan struct{})
			s.drained = drained
		}
		srv, done := s.srv, s.serveDone
		s.mu.Unlock()

		// Cancelling s.ctx ends every exchange at once (their handlers watch
		// it); once they have returned, the connections can be closed
		// outright. Shutdown would wait up to 5s for connections that a
		// client dialled but never used, which pooling clients leave behind.
		s.cancel()
		if drained != nil {
			<-drained
		}
		if srv != nil {
			if err := srv.Close(); err != nil {
				s.closeErr = fmt.Errorf("llmsim: close: %w", err)
			}
			<-done
		}
	})
	return s.closeErr
}

func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.inflight == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// serveHTTP routes by hand rather than with a ServeMux so that every
// error, 404 and 405 included, is in the shape of the API its path belongs
// to (OpenAI's for everything but /v1/messages and Gemini's paths).
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	wf, isCall := route(r)
	if !s.enter() {
		wf.fail(w, http.StatusServiceUnavailable, "The simulator is shutting down.", "", 0, 0)
		return
	}
	defer s.leave()
	switch {
	case isCall && r.Method == http.MethodPost:
		s.handle(w, r, wf)
	case isCall:
		wf.fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("Use POST for %s.", path), "", 0, 0)
	case r.Method == http.MethodPost && isGeminiCount(path):
		serveGeminiCount(w, r)
	case path == "/v1/models" && r.Method == http.MethodGet:
		s.handleModels(w)
	case path == "/props" && r.Method == http.MethodGet:
		s.handleProps(w, r)
	case strings.HasPrefix(path, "/v1/models/") && r.Method == http.MethodGet:
		// Any model name works, so every model "exists".
		writeJSON(w, modelObject(strings.TrimPrefix(path, "/v1/models/")))
	default:
		msg := fmt.Sprintf("Invalid URL (%s %s)", r.Method, path)
		if wf == chatWire { // OpenAI's unknown-route 404 has no model_not_found code
			writeError(w, http.StatusNotFound, msg, "invalid_request_error", nil, 0)
			return
		}
		wf.fail(w, http.StatusNotFound, msg, "", 0, 0)
	}
}

// route tells which wire format a path belongs to, and whether it is one of
// the generation endpoints.
func route(r *http.Request) (wf *wireFormat, isCall bool) {
	path := r.URL.Path
	switch path {
	case "/v1/chat/completions":
		return chatWire, true
	case "/v1/responses":
		return responsesWire, true
	case "/v1/messages":
		return anthropicWire, true
	}
	if rest, ok := strings.CutPrefix(path, "/v1beta/"); ok {
		_, _, isCall = geminiPath(rest)
		return geminiWire, isCall
	}
	if rest, ok := strings.CutPrefix(path, "/v1/"); ok {
		if _, _, isCall = geminiPath(rest); isCall { // genai with APIVersion "v1"
			return geminiWire, true
		}
	}
	return chatWire, false
}

// handle serves one generation request of any wire format.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, wf *wireFormat) {
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var req *request
	var enc encoder
	if err == nil {
		req, enc, err = wf.decode(r, body)
	}
	if err != nil {
		s.log.add(Record{Wire: wf.name, Step: "invalid_request", Start: start, End: time.Now(), Outcome: OutcomeRejected})
		wf.fail(w, http.StatusBadRequest, err.Error(), "", 0, 0)
		return
	}
	sc := s.sc.scriptFor(req.model)
	if sc.ignoreTools {
		req.tools, req.nTools, req.voteEnum = nil, 0, nil
	}
	if sc.window > 0 && req.prompt > sc.window {
		// Refused before any step is chosen, as a provider refuses it
		// before the model runs.
		id := s.log.add(Record{Wire: wf.name, Model: req.model, Stream: req.stream, Step: StepContextOverflow, Start: start,
			End: time.Now(), Outcome: OutcomeRejected, PromptTokens: req.prompt,
			Problem: fmt.Sprintf("the prompt (%d tokens) does not fit the context window (%d)", req.prompt, sc.window)})
		failOverflow(wf, w, req.model, req.prompt, sc.window, id)
		return
	}

	// Step selection and the log entry share the lock, so record IDs follow
	// the order in which steps were consumed.
	var msgs []Message
	if !s.leanLog {
		msgs = req.messages
	}
	s.mu.Lock()
	sel := s.selectLocked(req)
	id := s.log.add(Record{
		Wire: wf.name, Model: req.model, Stream: req.stream, Tools: req.tools, VoteEnum: req.voteEnum,
		Messages: msgs, Step: sel.label, Start: start, PromptTokens: req.prompt, JSONSchema: req.jsonSchema,
	})
	s.mu.Unlock()
	if sel.step != nil {
		if problem := checkResults(sel.step.ExpectResults, req.results); problem != "" {
			s.log.update(id, func(r *Record) {
				r.End, r.Outcome, r.Problem = time.Now(), OutcomeRejected, problem
			})
			wf.fail(w, http.StatusBadRequest, "llmsim: "+problem, req.model, 0, id)
			return
		}
	}
	p := buildPlan(req, sel)

	// Without Start (Handler mounted elsewhere) the request context does not
	// derive from s.ctx; tie them so that Close still aborts this exchange.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()

	x := &exchange{s: s, ctx: ctx, w: w, rc: http.NewResponseController(w), id: id, req: req, p: p, enc: enc}
	var res error
	switch {
	case p.status > 0:
		if p.ttftForced {
			res = x.sleep(p.ttft)
		}
		if res == nil {
			wf.fail(w, p.status, p.errText, req.model, p.retryAfter, id)
			x.markFirstByte()
			res = errStatusFault
		}
	case req.stream:
		res = x.stream()
	default:
		res = x.complete()
	}

	end := time.Now()
	outcome := OutcomeCompleted
	switch res {
	case nil:
	case errCancelled:
		outcome = OutcomeCancelled
	default:
		outcome = OutcomeFault
	}
	if !x.settled || res != nil { // settle already recorded a clean end
		s.log.update(id, func(r *Record) {
			r.End, r.Outcome, r.OutputTokens = end, outcome, x.tokens
		})
	}
	if s.logf != nil {
		s.logf("llmsim: #%d wire=%s model=%s stream=%t step=%s outcome=%s tokens=%d/%d in %s",
			id, wf.name, req.model, req.stream, p.step, outcome, req.prompt, x.tokens, end.Sub(start).Round(time.Millisecond))
	}
	if res == errCut || res == errCancelled {
		// Deliver what was written, then drop the connection without the
		// final chunk of the chunked body: the client sees an unexpected EOF,
		// as when a provider dies mid-stream. A cancelled exchange is dropped
		// the same way, because returning normally would end the response
		// cleanly (or, before any byte, send an empty 200) and a client
		// would take an aborted answer for a complete one. net/http recovers
		// this sentinel panic silently.
		_ = x.rc.Flush()
		panic(http.ErrAbortHandler)
	}
}

func (s *Server) handleModels(w http.ResponseWriter) {
	s.mu.Lock()
	names := make(map[string]bool, len(s.models)+len(s.sc.Models))
	for name := range s.models {
		names[name] = true
	}
	s.mu.Unlock()
	for name := range s.sc.Models {
		if name != "*" {
			names[name] = true
		}
	}
	list := struct {
		Object string `json:"object"`
		Data   []any  `json:"data"`
	}{Object: "list", Data: []any{}}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		list.Data = append(list.Data, modelObject(name))
	}
	writeJSON(w, list)
}

func modelObject(name string) any {
	return struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}{name, "model", 0, "llmsim"}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// Serve runs a simulator on addr until ctx is done, then shuts it down. It
// loads the scenario at scenarioPath first (none: default policy). logf, if
// not nil, receives a line when serving starts and one per request (from
// concurrent handlers: it must be safe for concurrent use). It is what
// `massgen sim serve --addr --scenario` calls. Records kept by this server
// omit Messages and only the latest few thousand are kept, so that memory
// does not grow with every conversation.
func Serve(ctx context.Context, addr, scenarioPath string, logf func(format string, args ...any)) error {
	var sc *Scenario
	if scenarioPath != "" {
		var err error
		if sc, err = LoadScenario(scenarioPath); err != nil {
			return err
		}
	}
	s := New(sc)
	s.logf, s.leanLog = logf, true
	s.KeepRequests(4096)
	base, err := s.Start(addr)
	if err != nil {
		return err
	}
	if logf != nil {
		what := "default policy"
		if scenarioPath != "" {
			what = "scenario " + scenarioPath
		}
		logf("llmsim: serving at %s (OpenAI Chat Completions and Responses, Anthropic Messages; Gemini under %s) (%s)",
			base, strings.TrimSuffix(base, "/v1")+"/v1beta", what)
	}
	<-ctx.Done()
	return s.Close()
}

// handleProps answers llama.cpp's GET /props for the model named by
// ?model= (llama.cpp's router takes the same parameter), the part of it
// that says whether the chat template can call tools: not for a model
// scripted with ignore_tools.
func (s *Server) handleProps(w http.ResponseWriter, r *http.Request) {
	model := r.URL.Query().Get("model")
	tools := !s.sc.scriptFor(model).ignoreTools
	writeJSON(w, map[string]any{
		"model_alias": model, "total_slots": 1,
		"chat_template_caps": map[string]any{"supports_tools": tools, "supports_tool_calls": tools},
	})
}
