package custom

import (
	"strings"
	"sync"
)

// tail keeps the last bytes written to it: a process's stderr, for the
// error that names why it failed.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the kept text, trimmed; "" when nothing was written.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// note is ": <tail>" for an error message, or "" when t is empty.
func (t *tail) note(label string) string {
	if s := t.String(); s != "" {
		return "; " + label + ": " + s
	}
	return ""
}
