package runlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// ErrClosed is returned by Handle once Close has run: the summary files are
// final by then, and silently accepting events would make them lie.
var ErrClosed = errors.New("runlog: writer closed")

// defaultStatusEvery is the cadence DESIGN.md §6 promises for status.json
// while a run is in progress, so watchers can tell a slow run from a dead one.
const defaultStatusEvery = 2 * time.Second

// flushMark identifies the state the summary files were written from.
type flushMark struct {
	version int
	dropped uint64
}

// Writer records one run on disk. All methods are safe for concurrent use;
// one mutex guards everything because events are few enough (deltas aside,
// which only append to an open file) that contention does not matter.
type Writer struct {
	mu sync.Mutex

	dir     string
	meta    Metadata
	started time.Time
	logFile *lineFile
	closed  bool

	// gaps are the files a write failed for (the logs are incomplete);
	// reserve is space kept at New for the files a finished run must
	// have (status.json first), given up when the disk is full.
	gaps    *gapSet
	reserve *reserve
	noted   string // the gaps status.json last said
	// retryFinal writes the final answer again, when its write failed:
	// at the end of the run, with the reserve's space.
	pendingFinal func() error

	// now and statusEvery are fields, not globals, so tests can drive the
	// clock and the ticker without sleeping.
	now         func() time.Time
	statusEvery time.Duration
	onTick      func() // test hook: called after each ticker rewrite

	// view is the run as this writer has seen it. It is the writer's own,
	// fed by Handle in the order the writer handles events, so the files
	// written for an event describe the run as of that event (a broker's
	// view may already be ahead of it).
	view   *event.View
	agents map[string]*agentFiles
	proc   Process

	events   []event.Record // non-droppable events, for coordination_events.json
	journal  *lineFile      // coordination_events.jsonl, appended as events come
	replay   *replayLog     // coordination_replay.jsonl, once Trace has opened it
	dropped  uint64         // droppable events the subscription lost
	version  int            // events applied, and changes made by Close
	flushed  flushMark      // what the summaries were last written from
	attempts []*attempt
	cur      *attempt

	answerFile string

	// persisted: the journal is written by Persist (a broker's sink,
	// before delivery), not by Handle.
	persisted atomic.Bool
}

// New creates root/log_<YYYYMMDD_HHMMSS_ffffff>/ (suffixed _2, _3… if a
// concurrent process took the name), opens massgen.log, and writes
// execution_metadata.yaml and an initial status.json.
func New(root string, started time.Time, meta Metadata) (*Writer, error) {
	if started.IsZero() {
		started = time.Now()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("runlog: create log root: %w", err)
	}
	dir, err := mkdirUnique(filepath.Join(root, "log_"+stamp(started)))
	if err != nil {
		return nil, fmt.Errorf("runlog: create log dir: %w", err)
	}
	return newIn(dir, started, meta)
}

// NewDir creates root/log_<YYYYMMDD_HHMMSS_ffffff>/ (suffixed as New does)
// and returns it: the log directory of an interactive session, whose turns
// log in turn_<N>/ inside it (NewTurn).
func NewDir(root string, started time.Time) (string, error) {
	if started.IsZero() {
		started = time.Now()
	}
	dir, err := mkdirUnique(filepath.Join(root, "log_"+stamp(started)))
	if err != nil {
		return "", fmt.Errorf("runlog: create log dir: %w", err)
	}
	return dir, nil
}

// NewTurn is New for turn n of a session: it logs in sessionDir/turn_<n>/
// (suffixed _2, _3… should that exist already).
func NewTurn(sessionDir string, n int, started time.Time, meta Metadata) (*Writer, error) {
	if started.IsZero() {
		started = time.Now()
	}
	dir, err := mkdirUnique(filepath.Join(sessionDir, fmt.Sprintf("turn_%d", n)))
	if err != nil {
		return nil, fmt.Errorf("runlog: create turn log dir: %w", err)
	}
	return newIn(dir, started, meta)
}

// newIn opens the log of a run in dir, which exists and is empty.
func newIn(dir string, started time.Time, meta Metadata) (*Writer, error) {
	gaps := newGaps(dir)
	lf, err := openLines(filepath.Join(dir, "massgen.log"), "massgen.log", gaps.set)
	if err != nil {
		return nil, fmt.Errorf("runlog: open massgen.log: %w", err)
	}
	jf, err := openLines(filepath.Join(dir, journalName), journalName, gaps.set)
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("runlog: open %s: %w", journalName, err)
	}
	w := &Writer{
		dir:         dir,
		meta:        meta,
		started:     started,
		logFile:     lf,
		journal:     jf,
		gaps:        gaps,
		now:         time.Now,
		statusEvery: defaultStatusEvery,
		view:        event.NewView(),
		agents:      map[string]*agentFiles{},
		proc:        thisProcess(),
	}
	w.view.Declare(meta.Agents, meta.IgnoredFeatures)
	w.view.Apply(event.RunStarted{Header: event.Header{Time: started}, Question: meta.Question})
	w.startAttempt(1)
	if err := errors.Join(w.writeMetadata(), w.writeStatus()); err != nil && !isNoSpace(err) {
		lf.Close()
		jf.Close()
		return nil, err
	}
	// A disk already full does not stop the run: its logs say what they
	// lack, and the reserve is tried again when the run has finished.
	w.reserve = newReserve(dir, reserveSize)
	return w, nil
}

// View is the writer's view of the run (status.json is written from it).
func (w *Writer) View() *event.View { return w.view }

func (w *Writer) snapshot() event.Snapshot { return w.view.Snapshot(w.now()) }

func (w *Writer) running() bool {
	status, _, _ := w.view.Progress()
	return status == event.RunRunning
}

// Dir is the log directory of this run.
func (w *Writer) Dir() string { return w.dir }

// LogWriter is an append-only handle to <dir>/massgen.log for the CLI's slog
// handler, which writes whole lines. It never fails (it may sit behind an
// io.MultiWriter, which would stop at it): a line it cannot write ends the
// file at the last whole line, and the logs are then incomplete. It is
// closed by Close; lines after that are not written.
func (w *Writer) LogWriter() io.Writer { return quiet{w.logFile} }

// quiet drops the error of its writer (recorded by the lineFile itself).
type quiet struct{ l *lineFile }

func (q quiet) Write(p []byte) (int, error) {
	_, _ = q.l.Write(p)
	return len(p), nil
}

// Incomplete says which of the run's files could not be written (whole),
// and why: "" when the logs are complete. The run's answer is unaffected.
func (w *Writer) Incomplete() string { return w.gaps.note() }

// AnswerFile is the path of final/<winner>/answer.txt once the final answer
// has been written, else "". It is the path automation prints as ANSWER_FILE.
func (w *Writer) AnswerFile() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answerFile
}

// Handle applies one event: it updates the view, writes the files the event
// produces, and (unless the event is a droppable delta) rewrites status.json.
// A write error is returned, but the view is updated anyway.
func (w *Writer) Handle(e event.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if h := e.Head(); h.Time.IsZero() {
		e = event.Stamped(e, h.Seq, w.now())
	}
	err := w.apply(e)
	w.gaps.add(err)
	return err
}

// Run feeds the subscription into Handle until the broker is closed and the
// queue drained, or ctx is done (events already queued are still handled,
// because Subscription.Next prefers its queue over cancellation). Meanwhile
// it rewrites status.json every statusEvery so elapsed time stays current.
// It returns the first write errors, else ctx.Err() if ctx ended the loop.
// Callers that want the final events (RunFinished) recorded after Ctrl+C
// should end Run by closing the broker rather than by cancelling ctx.
func (w *Writer) Run(ctx context.Context, sub *event.Subscription) error {
	stop := make(chan struct{})
	var tickErr error
	var wg sync.WaitGroup
	wg.Go(func() { tickErr = w.tick(stop) })

	var errs errList
	for {
		e, ok := sub.Next(ctx.Done())
		if !ok {
			break
		}
		if err := w.Handle(e); err != nil {
			if errors.Is(err, ErrClosed) {
				errs.add(err)
				break
			}
			errs.add(err)
		}
	}
	close(stop)
	wg.Wait()
	errs.add(tickErr)

	w.mu.Lock()
	w.dropped = sub.Dropped()
	w.mu.Unlock()

	if err := errs.err(); err != nil {
		return err
	}
	return ctx.Err()
}

// tick rewrites status.json until stop closes. It stops writing once the run
// has finished: after that the file no longer changes, and a frozen
// updated_at tells the reader so.
func (w *Writer) tick(stop <-chan struct{}) error {
	t := time.NewTicker(w.statusEvery)
	defer t.Stop()
	var errs errList
	for {
		select {
		case <-stop:
			return errs.err()
		case <-t.C:
		}
		w.mu.Lock()
		if !w.closed && w.running() {
			errs.add(w.writeStatus())
		}
		hook := w.onTick
		w.mu.Unlock()
		if hook != nil {
			hook()
		}
	}
}

// Close writes the summary files and the final status.json and closes every
// file handle. A run that never reported RunFinished is recorded as
// interrupted: the process is going away and the run did not finish.
// Close is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if w.running() {
		w.view.Apply(event.RunFinished{Header: event.Header{Time: w.now()}, Status: string(coord.RunInterrupted)})
		w.version++
	}
	var errs []error
	// RunFinished has written the summaries and status.json already;
	// write them again only if something changed since (an event, the
	// dropped-delta count, an interruption, a file found incomplete).
	if w.flushed != (flushMark{w.version, w.dropped}) || w.gaps.note() != w.noted {
		errs = append(errs, w.finishFiles())
	}
	w.closed = true
	for _, ag := range w.agents {
		errs = append(errs, ag.out.close())
	}
	errs = append(errs, w.cur.finalOut.close(), w.logFile.Close(), w.journal.Close(), w.replay.close())
	w.reserve.release()
	w.gaps.add(errors.Join(errs...))
	// Failed writes are summed up in one error, not listed one by one
	// (a full disk fails them by the hundred).
	if note := w.gaps.note(); note != "" {
		return &IncompleteError{Note: note}
	}
	return errors.Join(errs...)
}

// finishFiles writes the files of a finished run in the order they matter
// when space is short: status.json (what massgen logs reads: without it a
// finished run looks dead), vote.json, the final answer, then the rest;
// status.json again if a later file failed, so that it says so.
func (w *Writer) finishFiles() error {
	errs := []error{w.writeStatus(), w.flushSummaries(), w.retryFinal()}
	w.gaps.add(errors.Join(errs...))
	if w.gaps.note() != w.noted {
		errs = append(errs, w.writeStatus())
	}
	return errors.Join(errs...)
}

// flushSummaries writes the files derived from the whole run. They are
// rewritten at RunFinished and again at Close, so a process that dies after
// the run finished still leaves them behind.
func (w *Writer) flushSummaries() error {
	w.flushed = flushMark{w.version, w.dropped}
	// vote.json first: it is small and says who won; the events document,
	// the largest, last.
	errs := []error{w.putKey(filepath.Join(w.dir, "vote.json"), voteSummaryOf(w.snapshot()))}
	for _, a := range w.attempts {
		if w.meta.Attempts {
			errs = append(errs, w.putJSON(filepath.Join(a.base, "vote.json"), voteSummaryOf(w.attemptSnapshot(a))))
		}
	}
	errs = append(errs, w.writeTable(), w.writeEvents())
	return errors.Join(errs...)
}

// writeAtomic writes data to a temporary file in the target's directory and
// renames it into place, so a reader (a watcher, the HTTP server) never sees
// a half-written file. The temporary file has a fixed name: one Writer
// writes each of its files under its mutex, and every run has a directory
// of its own. It costs four system calls when the directory exists, the
// usual case (status.json is rewritten on every change).
func writeAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// put writes a file whole (writeAtomic, which creates its directory) and
// records the outcome: a file that could not be written is missing or as
// it was, never cut short or empty.
func (w *Writer) put(path string, data []byte) error {
	err := writeAtomic(path, data)
	w.gaps.set(path, err)
	return err
}

// putJSON is put for v as indented JSON.
func (w *Writer) putJSON(path string, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	return w.put(path, data)
}

// putKey is putJSON for a file a finished run must have (vote.json): on
// a full disk the reserve is given up for it.
func (w *Writer) putKey(path string, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	return w.putReserved(path, data)
}

// putReserved writes path whole, with the reserve's space if the disk is
// full.
func (w *Writer) putReserved(path string, data []byte) error {
	err := writeAtomic(path, data)
	if err != nil && isNoSpace(err) && w.reserve.release() {
		err = writeAtomic(path, data)
	}
	w.gaps.set(path, err)
	return err
}

// mkdirUnique creates path, or path_2, path_3… if it exists, and returns
// the one it created. Mkdir (not MkdirAll) makes the claim atomic.
func mkdirUnique(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	p := path
	for i := 2; ; i++ {
		err := os.Mkdir(p, 0o755)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return "", err
		}
		p = fmt.Sprintf("%s_%d", path, i)
	}
}

// stamp formats t as YYYYMMDD_HHMMSS_ffffff, MassGen's directory timestamp.
// Go layouts only allow fractions after '.' or ',', hence the Sprintf.
func stamp(t time.Time) string {
	return t.Format("20060102_150405") + fmt.Sprintf("_%06d", t.Nanosecond()/1000)
}

// errList keeps the first few errors of a long loop, plus a count of the
// rest, so a full disk yields one readable error instead of thousands.
type errList struct {
	errs []error
	more int
}

func (l *errList) add(err error) {
	if err == nil {
		return
	}
	if len(l.errs) < 3 {
		l.errs = append(l.errs, err)
		return
	}
	l.more++
}

func (l *errList) err() error {
	if l.more > 0 {
		return errors.Join(append(l.errs, fmt.Errorf("runlog: and %d more write errors", l.more))...)
	}
	return errors.Join(l.errs...)
}
