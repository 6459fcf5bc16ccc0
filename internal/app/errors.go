package app

import (
	"errors"
	"fmt"
)

// Kind says whose move an error before a run is. The CLI maps it to an exit
// code, the server to an HTTP status.
type Kind int

const (
	// KindConfig: the config or the request must change (exit 1, HTTP 400).
	KindConfig Kind = iota + 1
	// KindExecution: the machine failed us, e.g. no log directory could be
	// made or the simulator could not start (exit 2).
	KindExecution
)

// Error is an error that stops a run before it starts, with its Kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of err, or 0 when err is nil or unclassified.
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return 0
}

func usageErr(format string, args ...any) error {
	return &Error{Kind: KindConfig, Err: fmt.Errorf(format, args...)}
}

func execErr(format string, args ...any) error {
	return &Error{Kind: KindExecution, Err: fmt.Errorf(format, args...)}
}
