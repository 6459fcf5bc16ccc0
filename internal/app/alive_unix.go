//go:build unix

package app

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of this id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
