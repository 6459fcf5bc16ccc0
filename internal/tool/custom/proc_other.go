//go:build !linux

package custom

import "os/exec"

// isolate: outside Linux there is no parent-death signal; the process
// itself is killed when its context ends (its runner also exits when its
// stdin closes).
func isolate(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
