//go:build !unix

package runlog

import "os"

// processAlive: on Windows, FindProcess opens the process and fails when
// there is none.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
