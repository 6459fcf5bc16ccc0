package app

import (
	"io"
	"os"
	"sync"
	"time"
)

// Version is set at build time with -ldflags "-X github.com/massgen/massgen/internal/app.Version=…".
var Version = "0.1.0-dev"

// Env is the process environment a run sees; tests and library callers
// pass their own.
type Env struct {
	Getenv func(string) string
	// Stderr receives config warnings and, with Debug, the run's log.
	Stderr io.Writer
	// Now and WorkDir are injectable for tests.
	Now     func() time.Time
	WorkDir string
	// DotEnvLoaded says Getenv already includes the .env files, so Execute
	// does not read them again (the server loads them once, at start).
	DotEnvLoaded bool
}

// serialized is e with a Stderr that the run's goroutines may share: the
// warnings, the debug log and the MCP servers' notes are written from
// goroutines of their own, and a caller's writer (a bytes.Buffer in a
// program or a test) need not be safe for that.
func (e *Env) serialized() *Env {
	if _, ok := e.Stderr.(*syncWriter); ok {
		return e
	}
	c := *e
	c.Stderr = &syncWriter{w: e.Stderr}
	return &c
}

// syncWriter serialises the writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// WithDefaults fills what e leaves unset from the process: the working
// directory, the clock, the environment, and a Stderr that discards.
func (e *Env) WithDefaults() {
	if e.WorkDir == "" {
		e.WorkDir, _ = os.Getwd()
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
}
