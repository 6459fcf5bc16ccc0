package custom

import (
	"os/exec"
	"syscall"
)

// isolate puts cmd in its own process group, which dies with massgen
// (Pdeathsig: even after a kill -9 of massgen) and is killed whole when
// cmd's context ends, so a tool's own children go too.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
