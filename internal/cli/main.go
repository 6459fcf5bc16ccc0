package cli

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/redact"
)

// Main runs the command line of this process and returns its exit code.
// The first Ctrl+C (or SIGTERM) cancels the run: every model request is
// aborted, the logs are finished, and massgen exits 4. A second one kills
// the process at once, in case anything is stuck.
func Main() int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(orchestrator.GCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore the default handlers: the next signal terminates
	}()
	// The process's secrets (API keys, tokens, passwords by their
	// variables' names) are masked in every error it writes or serves.
	redact.Environ(os.Environ())
	return Run(ctx, os.Args[1:], Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}
