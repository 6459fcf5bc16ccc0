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
	// CustomPath is custom_tools_path: a Python tool tree copied into
	// custom_tools/ beside the wrappers (relative: the working
	// directory's). AutoDiscover is auto_discover_custom_tools: without a
	// CustomPath, massgen's custom tools library (codegen.FindLibrary) is
	// that tree; it also turns on the evolving-skills guidance.
	CustomPath   string
	AutoDiscover bool
	// ExcludeCustom is exclude_custom_tools: top-level directories of the
	// tree that are not copied.
	ExcludeCustom []string
}

// CodeTools reads b's code-based tools settings.
func (b Backend) CodeTools() CodeTools {
	var c CodeTools
	c.Enabled, _ = b.Extra["enable_code_based_tools"].(bool)
	c.SharedDir, _ = b.Extra["shared_tools_directory"].(string)
	c.Direct = stringsOf(b.Extra["direct_mcp_servers"])
	c.ExcludeFileOps, _ = b.Extra["exclude_file_operation_mcps"].(bool)
	c.CustomPath, _ = b.Extra["custom_tools_path"].(string)
	c.AutoDiscover, _ = b.Extra["auto_discover_custom_tools"].(bool)
	c.ExcludeCustom = stringsOf(b.Extra["exclude_custom_tools"])
	return c
}
