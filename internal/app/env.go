package app

import (
	"io"
	"os"
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
