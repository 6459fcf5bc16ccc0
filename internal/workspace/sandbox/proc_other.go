//go:build !linux

package sandbox

import "os/exec"

// isolate: outside Linux (where no Guard can be made, so no Runner runs)
// the process itself is killed when its context ends.
func isolate(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
