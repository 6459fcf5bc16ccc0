package config

// The workspace settings of a backend: upstream's `cwd`, `context_paths`
// and `enable_mcp_command_line` with its `command_line_*` family. Their
// types are checked while the backend decodes (ownedKey); this reads the
// checked values into typed fields.

// CommandLine is how an agent runs commands (enable_mcp_command_line: true).
type CommandLine struct {
	// Mode is command_line_execution_mode: local (default, bubblewrap) or docker.
	Mode string
	// Allowed and Blocked are command_line_allowed_commands and
	// command_line_blocked_commands: regular expressions.
	Allowed, Blocked []string
	// AllowUnsandboxed (command_line_allow_unsandboxed, massgen's own)
	// accepts running commands without a sandbox when bubblewrap is missing.
	AllowUnsandboxed bool
	// AllowNetwork (command_line_allow_network, massgen's own) lets
	// sandboxed commands reach the network; by default they cannot.
	AllowNetwork bool
	// Docker is docker mode's container (docker.go).
	Docker Docker
	// MaxProcesses (command_line_max_processes, massgen's own) bounds the
	// processes and threads of one command; 0 is the sandbox's default.
	MaxProcesses int
}

// workspaceKeys fills b's typed workspace fields from its checked Extra.
func workspaceKeys(b *Backend) {
	b.Cwd, _ = b.Extra["cwd"].(string)
	if mb, ok := b.Extra["workspace_max_size_mb"].(int); ok {
		b.WorkspaceMaxMB = mb
	}
	if on, _ := b.Extra["enable_mcp_command_line"].(bool); !on {
		return
	}
	cl := &CommandLine{Mode: "local"}
	if s, ok := b.Extra["command_line_execution_mode"].(string); ok {
		cl.Mode = s
	}
	cl.Allowed = stringsOf(b.Extra["command_line_allowed_commands"])
	cl.Blocked = stringsOf(b.Extra["command_line_blocked_commands"])
	cl.AllowUnsandboxed, _ = b.Extra["command_line_allow_unsandboxed"].(bool)
	cl.AllowNetwork, _ = b.Extra["command_line_allow_network"].(bool)
	cl.Docker = dockerOf(b.Extra)
	cl.MaxProcesses, _ = b.Extra["command_line_max_processes"].(int)
	b.CommandLine = cl
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
