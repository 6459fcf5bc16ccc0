package coord

import (
	"bufio"
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

// ReadLog reads what WriteTo wrote.
func ReadLog(r io.Reader) (*Log, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	l := &Log{}
	for n := 1; sc.Scan(); n++ {
		var err error
		if n == 1 {
			err = json.Unmarshal(sc.Bytes(), &l.Config)
		} else {
			var rec Record
			err = json.Unmarshal(sc.Bytes(), &rec)
			l.Steps = append(l.Steps, rec)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return l, sc.Err()
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
