package sandbox

// Docker mode's settings. The container itself is package sandbox/docker,
// which a program links by importing it (RegisterDocker): a program that
// never runs commands in Docker does not link the Docker client.

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/massgen/massgen/internal/workspace"
)

// DefaultImage is upstream's default command_line_docker_image.
const DefaultImage = "massgen/mcp-runtime:latest"

// Docker is how docker mode builds an agent's container (upstream's
// command_line_docker_* keys).
type Docker struct {
	// Image is command_line_docker_image ("" = DefaultImage). It is pulled
	// at the first command when the engine does not have it.
	Image string
	// Memory is command_line_docker_memory_limit in bytes (0 = no limit).
	Memory int64
	// CPUs is command_line_docker_cpu_limit (0 = no limit).
	CPUs float64
	// Network is command_line_docker_network_mode: none (default), bridge
	// or host.
	Network string
	// Sudo is command_line_docker_enable_sudo: commands run as the image's
	// user with the engine's default capabilities, so sudo (or root) can
	// install system packages in the container.
	Sudo bool
	// Credentials are shared with the container on purpose
	// (command_line_docker_credentials).
	Credentials Credentials
	// Packages are installed in each new container before its first
	// command (command_line_docker_packages).
	Packages Packages
}

// Credentials are files and variables of the user's that commands may use.
type Credentials struct {
	// Files are paths under the user's home (".ssh", ".gitconfig"), bound
	// read-only at the same place under the container's home (/tmp).
	Files []string
	// EnvVars are names of massgen's environment variables passed in.
	EnvVars []string
	// Env are NAME=value variables passed in as they are: those read from
	// .env files (command_line_docker_credentials.env_file). They reach the
	// container through the Engine API's Env, never a command line.
	Env []string
	// PassAllEnv passes massgen's whole environment in (pass_all_env).
	PassAllEnv bool
	// Mounts are bound besides the agent's view (additional_mounts),
	// unless they would undo it (docker/mounts.go).
	Mounts []Mount
}

// Mount is one additional_mounts entry: Host bound at Bind in the
// container, read-only unless Write.
type Mount struct {
	Host, Bind string
	Write      bool
}

// Packages are installed by the image's package managers, as root.
type Packages struct {
	System []string // apt-get install -y
	Python []string // pip install
	NPM    []string // npm install -g
}

// Container is docker mode's container of one agent, made at its first
// command. Package sandbox/docker provides it.
type Container interface {
	// Run runs command with sh -c in dir, writing its output (stdout and
	// stderr interleaved) to out; a command that outlives ctx is killed.
	Run(ctx context.Context, dir, command string, out io.Writer) (exit int, timedOut bool, err error)
	// ID is the live container's, or "" before the first command.
	ID() string
	// Image is the image it runs.
	Image() string
	// Close removes the container and lets go of the engine.
	Close()
}

// OpenContainer connects to the engine for the agent g guards: an engine
// that does not answer is the error (every command then says so), what the
// user should know before the run are the warnings.
type OpenContainer func(g *workspace.Guard, cfg Config) (c Container, warnings []string, err error)

var dockerOpen atomic.Pointer[OpenContainer]

// RegisterDocker makes docker mode available; package sandbox/docker calls
// it as it is linked in.
func RegisterDocker(open OpenContainer) { dockerOpen.Store(&open) }

// errDockerNotLinked is docker mode in a program that did not link it.
var errDockerNotLinked = errors.New("command_line_execution_mode: docker is not linked into this program: " +
	`import _ "github.com/massgen/massgen/sandbox/docker" (the massgen command links it)`)
