package coord

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Log is a run as its machine saw it: the Config it was built from and
// every step, in order. Written as JSON lines (the Config first, then one
// Record per line), it is the run's replay log: Replay steps a fresh
// Machine through its inputs and must get its commands again.
type Log struct {
	Config Config
	Steps  []Record
	// Torn is true when ReadLog left out a last line cut short.
	Torn bool `json:"-"`
}

// WriteTo writes the log as JSON lines.
func (l *Log) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	lw, err := NewLogWriter(cw, l.Config)
	if err != nil {
		return cw.n, err
	}
	for _, r := range l.Steps {
		if err := lw.Append(r); err != nil {
			return cw.n, err
		}
	}
	return cw.n, nil
}

// LogWriter writes a replay log as the run goes, in the form WriteTo
// writes and ReadLog reads: the Config, then one Record per step. Each
// line goes out in one Write, so a log appended to a file by a run that
// dies holds every step up to the last one whole. It is not safe for
// concurrent use (one goroutine feeds the machine).
type LogWriter struct{ enc *json.Encoder }

// NewLogWriter writes cfg, the log's first line, to w.
func NewLogWriter(w io.Writer, cfg Config) (*LogWriter, error) {
	enc := json.NewEncoder(w) // Encode writes each value in one Write
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return &LogWriter{enc: enc}, nil
}

// Append writes one step.
func (l *LogWriter) Append(r Record) error { return l.enc.Encode(r) }

// ReadLog reads what WriteTo wrote. A last line cut short (no newline, not
// valid JSON: the writer died or ran out of space mid-line) is not an
// error: the steps before it are read and Torn is set.
func ReadLog(r io.Reader) (*Log, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	l := &Log{}
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, rerr
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if rerr == io.EOF {
				return l, nil
			}
			continue
		}
		if rerr == io.EOF && !json.Valid(line) {
			l.Torn = true
			return l, nil
		}
		var err error
		if n == 1 {
			err = json.Unmarshal(line, &l.Config)
		} else {
			var rec Record
			err = json.Unmarshal(line, &rec)
			l.Steps = append(l.Steps, rec)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if rerr == io.EOF {
			return l, nil
		}
	}
}

// Replay steps a fresh Machine through the log's inputs and returns the
// steps it took: equal to l.Steps when the rules have not changed.
func (l *Log) Replay() []Record {
	m := New(l.Config)
	out := make([]Record, len(l.Steps))
	for i, r := range l.Steps {
		out[i] = Record{In: r.In, Out: m.Step(r.In)}
	}
	return out
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
