package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// lineFile is an append-only file of whole lines (the JSONL logs,
// massgen.log). Each Write appends whole lines or nothing: a write that
// fails part way (a full disk writes what fits) is cut back to the end of
// the last whole line, so a reader never meets a torn line. After the
// first failure nothing more is appended: the file is then a whole prefix
// of what the run wrote, with no gap a reader could not see, and the
// failure is kept for the run's note that its logs are incomplete.
type lineFile struct {
	mu    sync.Mutex
	f     *os.File
	out   io.Writer // f, or in tests f behind a writer that fails as a full disk does
	name  string    // for messages: the file's name in the log directory
	size  int64     // bytes of whole lines written
	lines int       // whole lines written by this process
	err   error     // the first failed write; later ones are not attempted
	// onFail is told of the first failure (the Writer's record of what
	// its logs lack). It is called with mu held: it must not call back.
	onFail func(name string, err error)
}

// openLines opens (creating) path for appending whole lines.
func openLines(path, name string, onFail func(string, error)) (*lineFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &lineFile{f: f, out: f, name: name, size: st.Size(), onFail: onFail}, nil
}

// errStopped is returned for writes after the first failure.
var errStopped = errors.New("not written: an earlier write to this file failed")

// Write appends p, which should end with a newline, in one write(2).
func (l *lineFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, fmt.Errorf("runlog: %s: %w", l.name, errStopped)
	}
	if l.f == nil {
		return 0, os.ErrClosed
	}
	n, err := l.out.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Cut back what part of p got written: a truncate needs no space.
		if n > 0 {
			if terr := l.f.Truncate(l.size); terr != nil {
				err = errors.Join(err, fmt.Errorf("cutting the torn line back: %w", terr))
			}
		}
		l.err = fmt.Errorf("runlog: %s: %w", l.name, err)
		if l.onFail != nil {
			l.onFail(l.name, err)
		}
		return 0, l.err
	}
	l.size += int64(n)
	l.lines += bytes.Count(p, []byte{'\n'})
	return n, nil
}

// Close closes the file.
func (l *lineFile) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// IsNoSpace reports whether err is a full disk (or a quota reached).
func IsNoSpace(err error) bool { return isNoSpace(err) }

// isNoSpace reports whether err is a full disk (or quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// ErrEndsEarly is what ReadJSONLines reports, wrapped, when the file's last
// line was cut short: the writer died or ran out of space in the middle of
// it. Every line before it was read.
var ErrEndsEarly = errors.New("the log ends early: its last line was cut short")

// ReadJSONLines reads a JSON-lines file (coordination_events.jsonl,
// coordination_replay.jsonl), giving each line to fn in order. A last
// line with no newline that is not valid JSON is a torn write: the lines
// before it are read, and the error wraps ErrEndsEarly. A bad line
// elsewhere, or an error from fn, ends the read with that error.
func ReadJSONLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		last := err == io.EOF // no newline: the file ends inside this line
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			if last {
				return nil
			}
			continue
		}
		if last && !json.Valid(body) {
			return fmt.Errorf("line %d (%d bytes): %w", n, len(body), ErrEndsEarly)
		}
		if err := fn(body); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if last {
			return nil
		}
	}
}
