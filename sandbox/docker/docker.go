// Package docker links docker mode (command_line_execution_mode: docker)
// into a program that imports it: agents' commands in a container of the
// configured image, through the Docker engine's API. Package massgen does
// not link the Docker client by default; a config in docker mode run by a
// program without it says so at its first command.
//
//	import _ "github.com/massgen/massgen/sandbox/docker"
package docker

import _ "github.com/massgen/massgen/internal/workspace/sandbox/docker" // registers docker mode
