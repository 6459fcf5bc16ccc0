package app

import (
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// sandboxMounts are command_line_docker_credentials.additional_mounts as
// the sandbox takes them (it checks them against the agent's view).
func sandboxMounts(ms []config.DockerMount) []sandbox.Mount {
	var out []sandbox.Mount
	for _, m := range ms {
		out = append(out, sandbox.Mount{Host: m.Host, Bind: m.Bind, Write: m.Write})
	}
	return out
}
