package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in its own process group, which dies with
// massgen (Pdeathsig: even after a kill -9 of massgen), so that killGroup
// takes the server's own children too (npx starts node, node may start more).
//
// Its own session (setsid) rather than only a group: it has no controlling
// terminal, so it cannot open /dev/tty or push input into the user's shell
// with TIOCSTI, and the session's group is still the one killGroup kills.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
