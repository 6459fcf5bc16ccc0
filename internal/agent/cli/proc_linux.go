package cli

import (
	"os/exec"
	"syscall"
)

// isolate gives the CLI a session of its own (no controlling terminal:
// it cannot read the user's keystrokes or push input into their shell),
// killed whole by killGroup, and kills it when massgen dies, even by kill
// -9. Under bubblewrap the same holds of the sandbox, whose processes die
// with it.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// No cmd.Cancel: exec.Command refuses one without a context; exec
	// kills the group when the task's context ends (context.AfterFunc).
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
