package webui

import (
	"cmp"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/store"
)

// maxListed bounds the runs GET /api/runs lists.
const maxListed = 200

// pastPrefix marks the id of a run found in the logs: "log:" and its name
// under the logs root (log_<timestamp> or log_<timestamp>/turn_<N>).
const pastPrefix = "log:"

// apiPrefix marks the id of a run an API client started: "api:" and the
// server's run id.
const apiPrefix = "api:"

// runView is a run as the page lists and opens it.
type runView struct {
	ID          string    `json:"id"`
	Live        bool      `json:"live"`        // of this process: its events come live from its broker
	Cancellable bool      `json:"cancellable"` // started from the page: Cancel works while it runs
	Question    string    `json:"question"`
	Status      string    `json:"status"`
	Started     time.Time `json:"started"`
	Deadline    time.Time `json:"deadline,omitzero"`
	Config      string    `json:"config,omitempty"`
	Session     string    `json:"session,omitempty"`
	Turn        int       `json:"turn,omitempty"`
	Winner      string    `json:"winner,omitempty"`
	Error       string    `json:"error,omitempty"`
	Agents      []string  `json:"agents,omitempty"`
	LogName     string    `json:"log,omitempty"` // the log directory's name under the logs root
}

func (u *UI) runJSON(r liveRun) runView {
	// The run's view is updated before its events are delivered: a page
	// that has seen run_finished is never told the run is still running.
	if r.Events != nil && (r.Status == "running" || r.Status == "starting") {
		if snap := r.Events.View().Snapshot(u.now()); snap.Status != "" && snap.Status != "running" {
			r.Status, r.Winner = snap.Status, snap.Winner
		}
	}
	return runView{ID: r.ID, Live: true, Cancellable: r.cancel != nil, Question: r.Question, Status: r.Status, Started: r.Started,
		Deadline: r.Deadline, Config: r.Config, Session: r.Session, Turn: r.Turn, Winner: r.Winner,
		Error: r.Error, Agents: r.Agents, LogName: u.logName(r.LogDir)}
}

func (u *UI) logsRoot() string { return app.LogsRoot(u.d.Env.WorkDir, u.d.LogDir) }

// listRuns is GET /api/runs: this process's runs, then those of the logs
// (a session's turns carry the session's id, for a follow-up), newest
// first.
func (u *UI) listRuns(w http.ResponseWriter, r *http.Request) {
	out := []runView{}
	seen := map[string]bool{}
	for _, lr := range u.runs.list() {
		if lr.LogDir != "" {
			seen[filepath.Clean(lr.LogDir)] = true
		}
		out = append(out, u.runJSON(lr))
	}
	for _, a := range u.apiRuns() {
		if a.LogDir != "" {
			seen[filepath.Clean(a.LogDir)] = true
		}
		out = append(out, u.runJSON(a))
	}
	past, err := app.PastRuns(u.logsRoot())
	if err != nil && !os.IsNotExist(err) {
		apiError(w, http.StatusInternalServerError, "cannot list the logs: %v", err)
		return
	}
	sessions := u.sessionsByDir(r.Context())
	for _, p := range past {
		if seen[filepath.Clean(p.Dir)] || len(out) >= maxListed {
			continue
		}
		out = append(out, u.pastView(p, sessions))
	}
	slices.SortStableFunc(out, func(a, b runView) int { return b.Started.Compare(a.Started) })
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// pastView is a run of the logs; sessions maps session directories to ids.
func (u *UI) pastView(p app.PastRun, sessions map[string]string) runView {
	st := p.Status
	v := runView{ID: pastPrefix + p.Name, Question: st.Meta.Question, Status: p.State, Started: st.Meta.StartedAt,
		Winner: st.Results.Winner, Agents: st.Coordination.AgentOrder, LogName: p.Name}
	if dir, turn, ok := strings.Cut(p.Name, "/turn_"); ok {
		v.Session = sessions[filepath.Clean(filepath.Join(u.logsRoot(), dir))]
		v.Turn = atoi(turn)
	} else {
		v.Session = sessions[filepath.Clean(p.Dir)]
	}
	return v
}

// sessionsByDir maps each stored session's log directory to its id ({}
// when there is no database yet).
func (u *UI) sessionsByDir(ctx context.Context) map[string]string {
	m := map[string]string{}
	path := store.DefaultPath(u.d.Env.WorkDir)
	if _, err := os.Stat(path); err != nil {
		return m
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		u.log.Warn("web UI: sessions database", "error", err)
		return m
	}
	defer st.Close()
	list, err := st.Sessions(ctx, 1000)
	if err != nil {
		return m
	}
	for _, s := range list {
		if s.LogDir != "" {
			m[filepath.Clean(s.LogDir)] = s.ID
		}
	}
	return m
}

// logName is a log directory's name under the logs root ("" outside it).
func (u *UI) logName(dir string) string {
	if dir == "" {
		return ""
	}
	rel, err := filepath.Rel(u.logsRoot(), dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// found is a run the page asks for: one started here, or one of the logs.
type found struct {
	live   *liveRun
	past   *app.PastRun
	logDir string
}

// findRun resolves an id of GET /api/runs. A log name must be one that
// app.PastRuns lists: nothing else under (or outside) the root is reached.
func (u *UI) findRun(w http.ResponseWriter, id string) (found, bool) {
	if name, ok := strings.CutPrefix(id, pastPrefix); ok {
		past, _ := app.PastRuns(u.logsRoot())
		for _, p := range past {
			if p.Name == name {
				return found{past: &p, logDir: p.Dir}, true
			}
		}
	} else if api, ok := strings.CutPrefix(id, apiPrefix); ok {
		for _, a := range u.apiRuns() {
			if a.ID == id && api != "" {
				return found{live: &a, logDir: a.LogDir}, true
			}
		}
	} else if lr, ok := u.runs.get(id); ok {
		return found{live: &lr, logDir: lr.LogDir}, true
	}
	apiError(w, http.StatusNotFound, "no run %q", id)
	return found{}, false
}

// runMeta is GET /api/run?id=…: what the page shows above the cards.
func (u *UI) runMeta(w http.ResponseWriter, r *http.Request) {
	f, ok := u.findRun(w, r.URL.Query().Get("id"))
	if !ok {
		return
	}
	if f.live != nil {
		writeJSON(w, http.StatusOK, u.runJSON(*f.live))
		return
	}
	writeJSON(w, http.StatusOK, u.pastView(*f.past, u.sessionsByDir(r.Context())))
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// sortBy sorts s by the key of each element.
func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
}

// apiRuns are the runs API clients started, as live runs the page cannot
// cancel (their client owns them); the question is the run's own, from its
// events.
func (u *UI) apiRuns() []liveRun {
	if u.d.APIRuns == nil {
		return nil
	}
	var out []liveRun
	for _, a := range u.d.APIRuns() {
		lr := liveRun{ID: apiPrefix + a.ID, Config: a.Model, Started: a.Created, Status: a.Status, Winner: a.Winner,
			LogDir: a.LogDir, Events: a.Events}
		if a.Events != nil {
			snap := a.Events.View().Snapshot(u.now())
			lr.Question = snap.Question
			for _, ag := range snap.Agents {
				lr.Agents = append(lr.Agents, ag.ID)
			}
		}
		if lr.Question == "" && a.LogDir == "" && a.Events == nil {
			continue // rejected before it started: nothing to show
		}
		out = append(out, lr)
	}
	return out
}
