//go:build unix

package runlog

import (
	"errors"
	"os"
	"syscall"
)

// processAlive asks the kernel whether pid exists: signal 0 checks
// without delivering anything. EPERM means it exists, owned by another user.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
