package webui

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
)

// keepLive is how many finished runs keep their broker in memory (a
// bounded history each); older ones are read from their logs.
const keepLive = 32

// liveRun is a run started from the page by this process.
type liveRun struct {
	ID       string
	Session  string // the session's id, once its first turn created it
	Turn     int
	Config   string // the config's name in the page
	Question string
	Started  time.Time
	Deadline time.Time // zero until the team is built
	LogDir   string
	Agents   []string
	Status   string // starting, running, then the run's own (completed, failed, timeout, interrupted) or "rejected"
	Error    string
	Winner   string
	Events   *event.Broker // nil until the team is built, and once let go
	cancel   context.CancelFunc
	// done is closed once the run's turn has returned: its log directory
	// is complete (the winner's context changes are written after its
	// last event).
	done chan struct{}
}

// session is a conversation this process holds open: one turn at a time.
type session struct {
	turn    chan struct{} // held by the turn at work
	s       *app.Session
	current *event.Broker // the events of its latest turn
}

func newSession(s *app.Session) *session { return &session{turn: make(chan struct{}, 1), s: s} }

// acquire takes the session's turn. A turn whose run has finished (its
// run_finished published) is only writing its last records: a follow-up
// asked at that moment waits for it rather than being refused.
func (s *session) acquire(ctx context.Context, g *runs) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	default:
	}
	g.mu.Lock()
	b := s.current
	g.mu.Unlock()
	if b == nil {
		return errSessionBusy
	}
	if st := b.View().Snapshot(time.Now()).Status; st == "" || st == "running" {
		return errSessionBusy
	}
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errSessionBusy
	}
}

func (s *session) release() { <-s.turn }

// runs are the runs started here and the sessions they belong to.
type runs struct {
	u        *UI
	wg       waitGroup
	mu       sync.Mutex
	byID     map[string]*liveRun
	order    []string // ids, oldest first
	running  int
	sessions map[string]*session // by session id
}

func newRuns(u *UI) *runs {
	return &runs{u: u, byID: map[string]*liveRun{}, sessions: map[string]*session{}}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// get returns a copy of a live run.
func (g *runs) get(id string) (liveRun, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[id]
	if r == nil {
		return liveRun{}, false
	}
	return *r, true
}

func (g *runs) update(id string, f func(*liveRun)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.byID[id]; r != nil {
		f(r)
	}
}

// list returns copies of the live runs, newest first.
func (g *runs) list() []liveRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]liveRun, 0, len(g.order))
	for _, id := range slices.Backward(g.order) {
		out = append(out, *g.byID[id])
	}
	return out
}

// startRequest is the body of POST /api/runs.
type startRequest struct {
	Config   string `json:"config"`   // a name of Deps.Configs; "" in a follow-up: the session's
	Question string `json:"question"` // required
	Session  string `json:"session"`  // continue this session ("" a new one)
}

// startRun starts a run and answers once its team is built (201 with the
// run), or with why it could not start.
func (u *UI) startRun(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "the body is not a start request: %v", err)
		return
	}
	req.Question = strings.TrimSpace(req.Question)
	if req.Question == "" {
		apiError(w, http.StatusBadRequest, "type a question first")
		return
	}
	rq := app.Request{Question: req.Question, Logging: app.Logging{LogDir: u.d.LogDir, Args: []string{"--web"}}}
	if req.Config != "" {
		src, ok := u.d.Configs()[req.Config]
		if !ok {
			apiError(w, http.StatusBadRequest, "no config named %q (the list is in /api/info)", req.Config)
			return
		}
		rq.Config = src
	}
	run, err := u.runs.start(r.Context(), req, rq)
	switch {
	case errors.Is(err, errBusy):
		apiError(w, http.StatusTooManyRequests, "%d runs are already running; wait for one to end or cancel one", u.d.MaxRuns)
	case err != nil:
		status := http.StatusBadRequest
		if errors.Is(err, errSessionBusy) {
			status = http.StatusConflict
		} else if app.KindOf(err) != app.KindConfig {
			status = http.StatusInternalServerError
		}
		apiError(w, status, "%v", err)
	default:
		writeJSON(w, http.StatusCreated, u.runJSON(run))
	}
}

// start runs rq as the next turn of the session req names (or of a new
// one) in its own goroutine, and returns once the team is built or the
// run could not start. The run outlives the request: only Shutdown or
// POST /api/cancel stops it.
func (g *runs) start(reqCtx context.Context, req startRequest, rq app.Request) (liveRun, error) {
	g.mu.Lock()
	if g.running >= g.u.d.MaxRuns {
		g.mu.Unlock()
		return liveRun{}, errBusy
	}
	g.running++
	g.mu.Unlock()
	release := func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}

	sess, err := g.session(reqCtx, req.Session)
	if err != nil {
		release()
		return liveRun{}, err
	}
	// One turn at a time in a session: a follow-up waits for the answer
	// it follows.
	if err := sess.acquire(reqCtx, g); err != nil {
		release()
		return liveRun{}, err
	}
	if rq.Config == "" {
		rq.Config = sess.s.ConfigPath() // a follow-up runs the session's team
	}
	ctx, cancel := context.WithCancel(g.u.ctx)
	run := &liveRun{ID: newID(), Session: sess.s.Info().ID, Config: cmp.Or(req.Config, displaySource(rq.Config)),
		Question: rq.Question, Started: g.u.now(), Status: "starting", cancel: cancel, done: make(chan struct{})}
	g.add(run)

	started := make(chan struct{})
	var once sync.Once
	markStarted := func() { once.Do(func() { close(started) }) }
	rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
		// The session has its id by now (its turn created it before the run).
		g.keepSession(sess)
		g.mu.Lock()
		sess.current = info.Events
		g.mu.Unlock()
		g.update(run.ID, func(lr *liveRun) {
			lr.Session, lr.Turn = sess.s.Info().ID, sess.s.LastTurn()
			lr.Status, lr.LogDir, lr.Events = "running", info.LogDir, info.Events
			lr.Deadline = g.u.now().Add(info.Timeout)
			for _, a := range info.Agents {
				lr.Agents = append(lr.Agents, a.ID)
			}
		})
		markStarted()
		for {
			if _, ok := sub.Next(nil); !ok {
				return
			}
		}
	}
	// The observer only waits for the end: it needs no event at all.
	rq.ObserveSkips = event.Types

	var runErr error
	g.wg.wg.Go(func() {
		defer release()
		defer cancel()
		defer markStarted()
		defer sess.release()
		out, err := sess.s.Turn(ctx, rq, true)
		g.update(run.ID, func(lr *liveRun) {
			lr.Session, lr.Turn = sess.s.Info().ID, sess.s.LastTurn()
			switch {
			case err != nil:
				lr.Status, lr.Error = "rejected", err.Error()
				runErr = err
			default:
				lr.Status, lr.Winner = string(out.Status), out.Winner
				lr.LogDir = cmp.Or(out.LogDir, lr.LogDir)
				if out.Err != nil {
					lr.Error = out.Err.Error()
				}
			}
		})
		close(run.done)
		g.keepSession(sess)
		g.finished()
	})
	select {
	case <-started:
	case <-reqCtx.Done():
		// The page went away while the team was being built: the run goes
		// on, and the runs list shows it.
	}
	lr, _ := g.get(run.ID)
	if lr.Status == "rejected" {
		g.mu.Lock()
		err := runErr
		g.mu.Unlock()
		if err != nil {
			return lr, err
		}
	}
	return lr, nil
}

// add registers a run.
func (g *runs) add(r *liveRun) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.byID[r.ID] = r
	g.order = append(g.order, r.ID)
}

// finished lets go of the brokers of old finished runs: their events are
// in their logs.
func (g *runs) finished() {
	g.mu.Lock()
	defer g.mu.Unlock()
	done := 0
	for _, id := range slices.Backward(g.order) {
		r := g.byID[id]
		if r.Status == "starting" || r.Status == "running" {
			continue
		}
		if done++; done > keepLive && r.LogDir != "" {
			r.Events = nil
		}
	}
}

// session returns the session id names, opening it from the database when
// this process does not hold it; "" starts a new one.
func (g *runs) session(ctx context.Context, id string) (*session, error) {
	if id != "" {
		g.mu.Lock()
		s := g.sessions[id]
		g.mu.Unlock()
		if s != nil {
			return s, nil
		}
	}
	env := g.u.d.Env
	s, err := app.OpenSession(ctx, &env, app.SessionOptions{ID: id})
	if err != nil {
		return nil, err
	}
	return newSession(s), nil
}

// keepSession remembers a session once its first turn gave it an id.
func (g *runs) keepSession(s *session) {
	id := s.s.Info().ID
	if id == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions[id] == nil {
		g.sessions[id] = s
	}
}

// wait waits for every run, then closes the sessions.
func (g *runs) wait(ctx context.Context) error {
	err := g.wg.wait(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, s := range g.sessions {
		select {
		case s.turn <- struct{}{}:
			_ = s.s.Close(context.WithoutCancel(ctx))
			delete(g.sessions, id)
		default: // a turn still at work (ctx ended first)
		}
	}
	return err
}

// cancelRun cancels a live run: POST /api/cancel {"run": id}.
func (u *UI) cancelRun(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Run string `json:"run"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "the body is not a cancel request: %v", err)
		return
	}
	var cancel context.CancelFunc
	u.runs.mu.Lock()
	if lr := u.runs.byID[req.Run]; lr != nil {
		cancel = lr.cancel
	}
	u.runs.mu.Unlock()
	if cancel == nil {
		apiError(w, http.StatusNotFound, "no run %q is running here", req.Run)
		return
	}
	u.log.Info("web UI: run cancelled", "run", req.Run)
	cancel()
	writeJSON(w, http.StatusAccepted, map[string]any{"run": req.Run, "cancelled": true})
}
