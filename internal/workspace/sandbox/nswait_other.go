//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"time"
)

// nsWait is Linux's (nswait_linux.go); bwrap runs nowhere else.
type nsWait struct{ w *os.File }

func newNSWait() (*nsWait, error)    { return nil, errors.New("no PID namespaces here") }
func (n *nsWait) started()           {}
func (n *nsWait) abandon()           {}
func (n *nsWait) wait(time.Duration) {}
