package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in its own process group, which dies with
// massgen (Pdeathsig: even after a kill -9 of massgen), so that killGroup
// takes the server's own children too (npx starts node, node may start more).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
