//go:build !linux

package mcp

import "os/exec"

// isolate does nothing here: process groups with a parent-death signal
// are Linux's. Close still kills the server itself.
func isolate(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
