package cli

import (
	"errors"
	"fmt"

	"github.com/massgen/massgen/internal/app"
)

// Exit codes, a contract with scripts that call massgen.
const (
	ExitOK          = 0
	ExitConfig      = 1
	ExitExecution   = 2
	ExitTimeout     = 3
	ExitInterrupted = 4
)

// exitError carries the exit code a failure maps to.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitConfig, err: fmt.Errorf(format, args...)}
}

func codeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	switch app.KindOf(err) {
	case app.KindConfig:
		return ExitConfig
	case app.KindExecution:
		return ExitExecution
	}
	return ExitConfig // cobra's own flag and argument errors
}
