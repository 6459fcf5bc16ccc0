package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/store"
)

// Background responses (POST /v1/responses with "background": true), as
// the OpenAI API has them: the request is answered at once with the
// Response queued, the run goes on without the client, which polls GET
// /v1/responses/{id} until its status is completed, failed or cancelled,
// and may cancel it with POST /v1/responses/{id}/cancel.
//
// With the sessions database (massgen serve without --no-store), a
// background run is recorded there before it is acknowledged, with the log
// directory of each of its attempts, and forgotten only once its outcome
// is stored. A server that stops, or is killed, with runs in flight finds
// them when it starts again (ResumeBackground) and carries each on from
// its replay log: the answers and votes its agents had given are not asked
// for again. Shutdown therefore pauses background runs at once rather than
// waiting for them.

// errCancelled is the cause of a background run cancelled by its client.
var errCancelled = errors.New("cancelled by the client (POST /v1/responses/{id}/cancel)")

// backgrounds are the background runs of this process, by run id.
type backgrounds struct {
	mu   sync.Mutex
	runs map[string]*bgRun
}

// bgRun is one background run in flight.
type bgRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once its outcome is stored (or it paused)
}

func (b *backgrounds) get(id string) *bgRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id]
}

func (b *backgrounds) set(id string, r *bgRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[string]*bgRun{}
	}
	if r == nil {
		delete(b.runs, id)
		return
	}
	b.runs[id] = r
}

// cancelAll cancels every run in flight with cause.
func (b *backgrounds) cancelAll(cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.runs {
		r.cancel(cause)
	}
}

// acceptBackground answers a background request: checked, recorded, the
// Response written back queued, and the run started without the client.
func (s *Server) acceptBackground(w http.ResponseWriter, ctx context.Context, req *chatRequest) {
	switch {
	case req.Stream:
		writeError(w, badRequest("stream", "unsupported_parameter",
			"massgen runs background responses without a stream: send stream: false, then poll GET /v1/responses/{id} (POST /v1/responses/{id}/cancel cancels it)."))
		return
	case !req.resp.store:
		writeError(w, badRequest("store", "invalid_value",
			"A background response must be stored, to be fetched later with GET /v1/responses/{id}: drop store: false."))
		return
	}
	// What would fail the run before it starts fails the request now,
	// not at the first poll. (The client's trace context is not kept: a
	// background run outlives the request it was made in.)
	rr, e := req.runRequest()
	model := cmp.Or(req.Model, DefaultModel)
	if e == nil {
		e = s.route(model, &rr)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	id, start := newRunID(), s.d.Now()
	if db := s.d.Responses; db != nil {
		body, _ := json.Marshal(req.resp.req)
		if err := db.PutBackground(ctx, store.BackgroundRun{ID: id, Created: start, Request: body}); err != nil {
			writeError(w, errNotKept(db.Path(), err))
			return
		}
	}
	r := newResponse(id, model, start, "queued", nil, nil, nil, req.resp)
	if e := s.keepState(r, req.resp); e != nil {
		s.forgetBackground(id)
		writeError(w, e)
		return
	}
	if !s.launch(id, req, model, start, nil) {
		s.forgetBackground(id)
		writeError(w, errShuttingDown)
		return
	}
	w.Header().Set("X-Massgen-Run-Id", id)
	writeJSON(w, http.StatusOK, r)
}

// ResumeBackground carries on the background runs a previous process of
// this server left in flight (it stopped or was killed), each from its
// log, and returns how many it started. Call it once, after New, when
// Deps.Responses is set; without it there is nothing to resume.
func (s *Server) ResumeBackground(ctx context.Context) (int, error) {
	db := s.d.Responses
	if db == nil {
		return 0, nil
	}
	runs, err := db.BackgroundRuns(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range runs {
		var rr responsesRequest
		err := json.Unmarshal(b.Request, &rr)
		var req *chatRequest
		var e *Error
		if err == nil {
			req, e = s.responsesChat(ctx, &rr)
		} else {
			e = NewError(http.StatusInternalServerError, "server_error", "The stored background request cannot be read: %v", err)
		}
		model := cmp.Or(rr.Model, DefaultModel)
		if e != nil {
			// Its previous response was forgotten meanwhile, say: the run
			// cannot be made again, and the client learns why.
			in := &responsesInput{req: &rr, store: true}
			s.failBackground(b.ID, model, b.Created, in, e)
			continue
		}
		s.log.Info("background run resumed", "run", b.ID, "model", model, "attempts", len(b.LogDirs))
		if !s.launch(b.ID, req, model, b.Created, b.LogDirs) {
			break // shutting down already: the next start resumes them
		}
		n++
	}
	return n, nil
}

// launch starts run id without a client; false if the server is closing.
func (s *Server) launch(id string, req *chatRequest, model string, start time.Time, logDirs []string) bool {
	if !s.enter() {
		return false
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	b := &bgRun{cancel: cancel, done: make(chan struct{})}
	s.bg.set(id, b)
	go func() {
		defer s.leave()
		defer close(b.done)
		defer s.bg.set(id, nil)
		defer cancel(nil)
		defer context.AfterFunc(s.stopCtx, func() { cancel(errStopped) })()
		s.runBackground(ctx, id, req, model, start, logDirs)
	}()
	return true
}

// runBackground runs one background response to its stored outcome, or
// leaves it recorded for the next start when the server stops under it.
func (s *Server) runBackground(ctx context.Context, id string, req *chatRequest, model string, start time.Time, logDirs []string) {
	rr, e := req.runRequest()
	if e == nil {
		e = s.route(model, &rr) // a config gone since a restart
	}
	if e != nil {
		s.failBackground(id, model, start, req.resp, e)
		return
	}
	if err := s.adm.acquire(ctx); err != nil {
		if errors.Is(context.Cause(ctx), errCancelled) {
			s.cancelBackground(id, model, start, req.resp)
		}
		// else the server is stopping: the run stays recorded.
		return
	}
	defer s.adm.release()

	s.runs.add(id, model, start)
	status := "rejected"
	var res *RunResult
	defer func() {
		var winner, logDir string
		if res != nil {
			winner, logDir = res.Winner, res.LogDir
		}
		s.runs.finish(id, status, winner, logDir, s.d.Now())
	}()
	running := newResponse(id, model, start, "in_progress", nil, nil, nil, req.resp)
	if e := s.keepState(running, req.resp); e != nil {
		s.log.Error("background run: cannot record it in progress", "run", id, "err", e)
	}
	rr.ResumeFrom = logDirs
	rr.Started = func(logDir string, view *event.View, events *event.Broker) {
		s.runs.update(id, func(ri *runInfo) { ri.LogDir, ri.View, ri.Events = logDir, view, events })
		if db := s.d.Responses; db != nil && logDir != "" {
			if err := db.AddBackgroundLogDir(context.WithoutCancel(ctx), id, logDir); err != nil {
				s.log.Error("background run: cannot record its log directory (a restart would run it from the start)", "run", id, "err", err)
			}
		}
	}
	var mu sync.Mutex
	var events []event.Event
	rr.Observe = func(e event.Event) {
		if e.Type() == event.TypeFinalDelta {
			return
		}
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	s.log.Info("background run started", "run", id, "model", model, "resumed", len(logDirs) > 0)
	res, err := s.runOnce(ctx, rr)
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStopped) && s.d.Responses != nil:
		status = "interrupted"
		s.log.Info("background run paused: the server is stopping; it carries on when the server starts again", "run", id)
		return
	case errors.Is(cause, errCancelled):
		status = "cancelled"
		s.cancelBackground(id, model, start, req.resp)
		return
	case err != nil:
		s.failBackground(id, model, start, req.resp, asError(err))
		return
	}
	status = string(res.Status)
	if e := s.runFailure(ctx, res, rr.Output); e != nil {
		s.failBackground(id, model, start, req.resp, e)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	st := newResponsesStream(nil, id, model, start, 0, nil, req.resp, s.kept)
	st.hold = req.format != nil
	for _, e := range events {
		st.observe(e)
	}
	c := &call{rr: rr, id: id, model: model, start: start, notes: req.notes}
	if _, e := st.finishLocked(res, s.info(c, res)); e != nil {
		s.log.Error("background run: its outcome cannot be stored", "run", id, "err", e)
		s.failBackground(id, model, start, req.resp, e)
		return
	}
	s.forgetBackground(id)
	s.log.Info("background run finished", "run", id, "status", res.Status, "winner", res.Winner,
		"duration", s.d.Now().Sub(start).Round(time.Millisecond))
}

// failBackground stores run id's Response as failed with e, and forgets
// the run.
func (s *Server) failBackground(id, model string, start time.Time, in *responsesInput, e *Error) {
	r := newResponse(id, model, start, "failed", nil, nil, nil, in)
	obj := e.object()
	r.Error = &obj
	if ke := s.keepState(r, in); ke != nil {
		s.log.Error("background run: its failure cannot be stored", "run", id, "err", ke)
	}
	s.forgetBackground(id)
}

// cancelBackground stores run id's Response as cancelled, and forgets the
// run.
func (s *Server) cancelBackground(id, model string, start time.Time, in *responsesInput) {
	if ke := s.keepState(newResponse(id, model, start, "cancelled", nil, nil, nil, in), in); ke != nil {
		s.log.Error("background run: its cancellation cannot be stored", "run", id, "err", ke)
	}
	s.forgetBackground(id)
}

// keepState keeps a Response without output (queued, in progress, failed,
// cancelled) for GET /v1/responses/{id}.
func (s *Server) keepState(r response, in *responsesInput) *Error {
	object, _ := json.Marshal(r)
	return s.kept.put(r.ID, time.Unix(r.CreatedAt, 0), in.conv, nil, object)
}

// forgetBackground removes run id from the database's runs in flight.
func (s *Server) forgetBackground(id string) {
	if db := s.d.Responses; db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
		defer cancel()
		if err := db.EndBackground(ctx, id); err != nil {
			s.log.Error("background run: cannot forget it (a restart would run it again)", "run", id, "err", err)
		}
	}
}

// POST /v1/responses/{id}/cancel: a background response in progress is
// cancelled, and its Response returned with status cancelled. A
// background response that has ended is returned as it is.
func (s *Server) cancelResponse(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodPost) {
		return
	}
	rid := r.PathValue("id")
	if b := s.bg.get(strings.TrimPrefix(rid, "resp_")); b != nil {
		b.cancel(errCancelled)
		select {
		case <-b.done:
		case <-r.Context().Done():
			return
		}
	}
	obj, ok, e := s.kept.object(r.Context(), rid)
	switch {
	case e != nil:
		writeError(w, e)
		return
	case !ok:
		writeError(w, s.responseNotFound(rid))
		return
	}
	var head struct {
		Background bool `json:"background"`
	}
	if json.Unmarshal(obj, &head) != nil || !head.Background {
		writeError(w, badRequest("response_id", "invalid_request",
			"Only a background response can be cancelled; '%s' ran in the request that made it.", rid))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(obj)
}
