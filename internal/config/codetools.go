package config

// CodeTools are a backend's code-based tools settings (behaviour §7; the
// feature is package tool/codegen). Their types are checked while the
// backend decodes (ownedKey).
type CodeTools struct {
	// Enabled is enable_code_based_tools: the agent's MCP tools become
	// Python wrappers in its workspace, called through execute_command,
	// instead of function-calling tools.
	Enabled bool
	// SharedDir is shared_tools_directory: the wrappers go to
	// <dir>/<hash of the configuration>/, shared by agents with the same
	// servers ("": each agent's workspace). A relative path is the
	// working directory's, as upstream resolves it.
	SharedDir string
	// Direct is direct_mcp_servers: servers that stay function-calling
	// tools.
	Direct []string
	// ExcludeFileOps is exclude_file_operation_mcps: of the file tools
	// only write_file and edit_file are offered; reading, listing and
	// searching happen through commands.
	ExcludeFileOps bool
}

// CodeTools reads b's code-based tools settings.
func (b Backend) CodeTools() CodeTools {
	var c CodeTools
	c.Enabled, _ = b.Extra["enable_code_based_tools"].(bool)
	c.SharedDir, _ = b.Extra["shared_tools_directory"].(string)
	c.Direct = stringsOf(b.Extra["direct_mcp_servers"])
	c.ExcludeFileOps, _ = b.Extra["exclude_file_operation_mcps"].(bool)
	return c
}
