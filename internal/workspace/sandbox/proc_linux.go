package sandbox

import (
	"os/exec"
	"syscall"
)

// isolate puts a command in its own process group, killed whole when its
// context ends, and dying with massgen (even after a kill -9 of massgen).
//
// Its own session (setsid) rather than only a group: it has no controlling
// terminal, so it cannot open /dev/tty or push input into the user's shell
// with TIOCSTI, and the session's group is still the one killGroup kills.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
