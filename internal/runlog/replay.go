package runlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/massgen/massgen/internal/coord"
)

// ReplayName is the run's replay log: the coordination machine's Config,
// then every input the run fed it with the commands it returned, one JSON
// line per step (coord.ReadLog reads it, coord.(*Log).Replay re-runs it).
//
// It is a file of its own rather than lines inside coordination_events.jsonl
// because the two describe different things: the events are what observers
// were told (streamed text aside), in the event vocabulary, published from
// several goroutines; the replay log is what the machine was told, in
// coord's vocabulary, from its one loop and in its order. One file per
// vocabulary keeps each readable by its own decoder, with no filtering.
const ReplayName = "coordination_replay.jsonl"

// replayLog appends a run's replay log as the machine steps. Its own mutex,
// not the Writer's: the run's loop calls it, and must not wait while the
// Writer rewrites status.json.
type replayLog struct {
	mu     sync.Mutex
	f      *lineFile
	lw     *coord.LogWriter
	err    error // the first failed write; later steps are not written
	closed bool
}

// Trace opens the run's replay log, writes cfg as its first line, and
// returns the function that appends each step: give it to
// orchestrator.Options.Trace, with cfg from Options.MachineConfig. Each step
// is written as it is taken, so a run that dies leaves every step before it
// on disk. A write that fails stops the log (a replay log with a hole
// cannot be replayed); Close returns that error. Call Trace at most once.
func (w *Writer) Trace(cfg coord.Config) (func(coord.Input, []coord.Command), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	if w.replay != nil {
		return nil, errors.New("runlog: Trace called twice")
	}
	// Whole lines or none: a step that cannot be written (a full disk)
	// ends the log at the step before, which coord.ReadLog reads.
	f, err := openLines(filepath.Join(w.dir, ReplayName), ReplayName, w.gaps.set)
	if err != nil {
		return nil, fmt.Errorf("runlog: open %s: %w", ReplayName, err)
	}
	lw, err := coord.NewLogWriter(f, cfg)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runlog: write %s: %w", ReplayName, err)
	}
	r := &replayLog{f: f, lw: lw}
	w.replay = r
	return r.append, nil
}

func (r *replayLog) append(in coord.Input, out []coord.Command) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil {
		return
	}
	if err := r.lw.Append(coord.Record{In: in, Out: out}); err != nil {
		r.err = fmt.Errorf("runlog: write %s: %w", ReplayName, err)
	}
}

// close ends the log; steps after it are not written.
func (r *replayLog) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return errors.Join(r.err, r.f.Close())
}
