package webui

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
)

// DefaultMaxRuns is how many runs started from the page may run at once.
const DefaultMaxRuns = 4

// Deps is what the UI needs.
type Deps struct {
	// Env is the environment of the runs: WorkDir holds the sessions
	// database and (unless LogDir says otherwise) the logs.
	Env app.Env
	// Configs lists the configs a run may be started with: a name shown
	// in the page → a file or @examples/NAME. Asked on each request.
	Configs func() map[string]string
	// DefaultConfig is the name preselected in the page ("" none).
	DefaultConfig string
	LogDir        string // root of the log directories ("" the default)
	// Token, when set, must come as "Authorization: Bearer <Token>" on
	// every /api/ route.
	Token string
	// AllowHost, when set, says which Host headers are served; nil leaves
	// the check to the server in front (massgen serve's middleware).
	AllowHost func(host string) bool
	MaxRuns   int
	Version   string
	Logger    *slog.Logger
	// APIRuns, when set, lists the runs API clients started (massgen
	// serve's), newest first: the page lists them and follows them live.
	APIRuns func() []APIRun
}

// APIRun is a run an API client started, as the page shows it.
type APIRun struct {
	ID, Model, Status, Winner, LogDir string
	Created                           time.Time
	Events                            *event.Broker // nil: not (or no longer) in memory
}

// UI is the Web UI's handler and the runs it started.
type UI struct {
	d      Deps
	log    *slog.Logger
	mux    *http.ServeMux
	runs   *runs
	ctx    context.Context // cancelled by Shutdown: every run started here
	cancel context.CancelFunc
}

// New returns the UI. Call Shutdown when the server stops.
func New(d Deps) *UI {
	d.MaxRuns = cmp.Or(max(d.MaxRuns, 0), DefaultMaxRuns)
	d.Version = cmp.Or(d.Version, "dev")
	if d.Configs == nil {
		d.Configs = func() map[string]string { return nil }
	}
	u := &UI{d: d, log: cmp.Or(d.Logger, slog.New(slog.DiscardHandler))}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.runs = newRuns(u)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", u.info)
	mux.HandleFunc("GET /api/runs", u.listRuns)
	mux.HandleFunc("POST /api/runs", u.startRun)
	mux.HandleFunc("GET /api/run", u.runMeta)
	mux.HandleFunc("GET /api/events", u.events)
	mux.HandleFunc("POST /api/cancel", u.cancelRun)
	mux.HandleFunc("GET /api/files", u.files)
	mux.HandleFunc("GET /api/diff", u.diff)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "no such route: %s %s", r.Method, r.URL.Path)
	})
	mux.Handle("/", staticHandler())
	u.mux = mux
	return u
}

// Handler serves the UI under prefix ("/ui": the page at /ui/, its API
// at /ui/api/…).
func (u *UI) Handler(prefix string) http.Handler {
	prefix = strings.TrimSuffix(prefix, "/")
	inner := http.StripPrefix(prefix, u.guard(u.mux))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == prefix {
			http.Redirect(w, r, prefix+"/", http.StatusFound)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// Shutdown cancels the runs started here and waits for them to end (or
// ctx), then closes their sessions.
func (u *UI) Shutdown(ctx context.Context) error {
	u.cancel()
	return u.runs.wait(ctx)
}

// guard refuses what a page of another origin, a rebound name or a
// client without the token may ask.
func (u *UI) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.d.AllowHost != nil && !u.d.AllowHost(r.Host) {
			u.log.Warn("web UI: request refused: Host not allowed", "host", r.Host, "path", r.URL.Path)
			apiError(w, http.StatusForbidden, "Host %q is not allowed", r.Host)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// Everything the page loads is its own: no inline script, no
		// other origin, so an answer that smuggles markup in runs nothing.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Cache-Control", "no-store")
		if !sameOrigin(r) {
			u.log.Warn("web UI: cross-origin request refused", "origin", r.Header.Get("Origin"), "path", r.URL.Path)
			apiError(w, http.StatusForbidden, "cross-origin requests are refused")
			return
		}
		if u.d.Token != "" {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(u.d.Token)) != 1 {
				apiError(w, http.StatusUnauthorized, "a valid token is required: open the address massgen printed (its #token=…), or give the server's API key")
				return
			}
		}
		if r.Method == http.MethodPost {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				apiError(w, http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether r comes from the page itself (or from a
// client that is not a browser: no Origin, no Sec-Fetch-Site). A browser
// sends Sec-Fetch-Site on every request and Origin on every POST and
// cross-origin fetch; either naming another site refuses the request,
// whatever the token.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	ou, err := url.Parse(o)
	if err != nil || ou.Host == "" {
		return false // "null": a sandboxed frame or a file:// page
	}
	return strings.EqualFold(ou.Host, r.Host)
}

// apiError writes {"error": {"message": …}}.
func apiError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": fmt.Sprintf(format, args...)}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"cannot encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// info is what the page needs first: the version and the configs.
func (u *UI) info(w http.ResponseWriter, r *http.Request) {
	type cfg struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	var configs []cfg
	for name, src := range u.d.Configs() {
		configs = append(configs, cfg{Name: name, Source: displaySource(src)})
	}
	sortBy(configs, func(c cfg) string { return c.Name })
	writeJSON(w, http.StatusOK, map[string]any{"version": u.d.Version, "configs": configs,
		"default_config": u.d.DefaultConfig, "max_runs": u.d.MaxRuns})
}

// displaySource is a config's source as the page shows it: an example's
// name, or a file's base name (the page has no use for the server's paths).
func displaySource(src string) string {
	if strings.HasPrefix(src, "@") {
		return src
	}
	if i := strings.LastIndexAny(src, `/\`); i >= 0 {
		return src[i+1:]
	}
	return src
}

// errBusy is why a run cannot start now; errSessionBusy why a follow-up
// cannot.
var (
	errBusy        = errors.New("busy")
	errSessionBusy = errors.New("this session's previous question is still running: wait for its answer, or cancel it")
)

// waitGroup is a sync.WaitGroup whose Wait can give up.
type waitGroup struct {
	wg sync.WaitGroup
}

func (g *waitGroup) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// now is the time of the runs' clock.
func (u *UI) now() time.Time {
	if u.d.Env.Now != nil {
		return u.d.Env.Now()
	}
	return time.Now()
}
