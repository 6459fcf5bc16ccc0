package custom

import (
	"os/exec"
	"syscall"
)

// isolate puts cmd in its own process group, which dies with massgen
// (Pdeathsig: even after a kill -9 of massgen), so that killGroup takes a
// tool's own children too. A cmd made with a context is killed that way
// when the context ends.
//
// Its own session (setsid) rather than only a group: it has no controlling
// terminal, so it cannot open /dev/tty or push input into the user's shell
// with TIOCSTI, and the session's group is still the one killGroup kills.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return killGroup(cmd) }
	}
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
