package app

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
)

// warnings are a run's diagnostics: what it does not do as asked, or
// could not keep. Each one is an event.Warning on the run's broker, so
// every surface that shows the run's events shows it the same way; app
// itself prints nothing (the CLI prints them from the events). A warning
// found before the broker exists (the config's, the team's, the
// workspaces') waits and is published first; one found after the broker
// has closed (a log that could not be closed) is only in Outcome.Warnings,
// whose LateWarnings the caller shows.
//
// A run that nobody observes (Request.Observe is nil: the Go API without
// OnEvent, massgen eval's runs) still has its warnings on Env.Stderr, as
// lines, since no other reader would see them.
type warnings struct {
	mu     sync.Mutex
	broker *event.Broker
	all    []event.Warning
	quiet  map[int]bool // indexes in all that direct does not print
	queued int          // how many of all wait for the broker
	late   int          // how many of all came after it closed (the last ones)
	closed bool
	direct io.Writer // nil when an observer shows them

	// A durable sink's failure (sink) is published from a goroutine of
	// its own: the sink runs inside the broker's Publish, which holds the
	// broker's lock, so it cannot publish, nor take mu (publish holds mu
	// while it calls the broker).
	smu         sync.Mutex
	sinkClosed  bool     // detach has begun: no more goroutines
	sinkLate    []string // failures after that, for the outcome only
	sinkPending sync.WaitGroup
}

// sink wraps a durable sink of the broker (event.Broker.Persist) whose
// failures are warnings of the run: the first one is published, the rest
// would repeat it, and the broker is told none of them (PersistErr would
// report it a second time). A failed sink does not hold the event back.
func (w *warnings) sink(persist func(event.Event) error) func(event.Event) error {
	var once sync.Once
	return func(e event.Event) error {
		if err := persist(e); err != nil {
			once.Do(func() {
				w.smu.Lock()
				defer w.smu.Unlock()
				if w.sinkClosed {
					w.sinkLate = append(w.sinkLate, err.Error())
					return
				}
				w.sinkPending.Go(func() { w.add("%v", err) })
			})
		}
		return nil
	}
}

// team records the warnings of the run's config and team. A team massgen
// serve caches serves many runs: each run's events carry them, but with
// no observer they are printed once per team, not once per run.
func (w *warnings) team(cfg *config.Config, t *team) {
	n := len(w.all)
	w.config(cfg.Warnings)
	for _, s := range t.warnings {
		w.add("%s", s)
	}
	if t.warned.Swap(true) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.quiet == nil {
			w.quiet = map[int]bool{}
		}
		for i := n; i < len(w.all); i++ {
			w.quiet[i] = true
		}
	}
}

// add records the warning msg (without a "warning:" prefix).
func (w *warnings) add(format string, args ...any) {
	w.publish(event.Warning{Text: fmt.Sprintf(format, args...)})
}

// config records the config's warnings, each distinct message once with
// a count of its repetitions: a fifty-agent config should not warn fifty
// times (massgen config validate lists every one).
func (w *warnings) config(ds []config.Diagnostic) {
	seen := map[string]int{}
	var order []config.Diagnostic
	for _, d := range ds {
		if seen[d.Message]++; seen[d.Message] == 1 {
			order = append(order, d)
		}
	}
	for _, d := range order {
		more := ""
		if n := seen[d.Message] - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more like it)", n)
		}
		// d.String() is "FILE:LINE:COL: warning: KEY: MESSAGE — HINT".
		where, text, ok := strings.Cut(d.String(), "warning: ")
		if !ok {
			where, text = "", d.String()
		}
		w.publish(event.Warning{Where: strings.TrimSuffix(strings.TrimSpace(where), ":"), Text: text + more})
	}
}

func (w *warnings) publish(e event.Warning) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, e)
	switch {
	case w.closed:
		w.late++
	case w.broker == nil:
		w.queued++
		return
	default:
		w.broker.Publish(e)
	}
	if w.direct != nil {
		fmt.Fprintln(w.direct, e.Line())
	}
}

// attach publishes the waiting warnings on b, and the next ones as they
// come; with direct set, it also prints the waiting ones there.
func (w *warnings) attach(b *event.Broker, direct io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broker, w.direct = b, direct
	for i := len(w.all) - w.queued; i < len(w.all); i++ {
		b.Publish(w.all[i])
		if direct != nil && !w.quiet[i] {
			fmt.Fprintln(direct, w.all[i].Line())
		}
	}
	w.queued = 0
}

// detach is called before the broker closes: later warnings are kept for
// the outcome only.
func (w *warnings) detach() {
	w.smu.Lock()
	w.sinkClosed = true
	w.smu.Unlock()
	w.sinkPending.Wait() // a sink's warning still on its way to the broker
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// lines returns every warning as the command line prints it, and those
// that came after the events ended.
func (w *warnings) lines() (all, late []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.smu.Lock() // smu is only ever taken last
	for _, s := range w.sinkLate {
		w.all = append(w.all, event.Warning{Text: s})
		w.late++
	}
	w.sinkLate = nil
	w.smu.Unlock()
	for i, e := range w.all {
		all = append(all, e.Line())
		if i >= len(w.all)-w.late {
			late = append(late, e.Line())
		}
	}
	return all, late
}

// lineWriter turns what a component writes as "warning: …" lines (the
// telemetry exporter's) into warnings of the run.
type lineWriter struct {
	w   *warnings
	mu  sync.Mutex
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if line != "" {
			l.w.add("%s", strings.TrimPrefix(line, "warning: "))
		}
	}
}

// unpublished prints the warnings of a run that never started (an error
// before its broker existed) on stderr, the one place left for them.
func (w *warnings) unpublished(stderr io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broker != nil {
		return
	}
	for _, e := range w.all {
		fmt.Fprintln(stderr, e.Line())
	}
}

// unobserved is where a run's warnings are printed besides its events:
// stderr when nobody reads the events, nowhere (nil) when an observer
// shows them.
func unobserved(rq Request, stderr io.Writer) io.Writer {
	if rq.Observe != nil {
		return nil
	}
	return stderr
}
