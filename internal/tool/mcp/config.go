package mcp

import (
	"encoding/json"
	"os/exec"
	"time"
)

// Transport types of a server config.
const (
	Stdio          = "stdio"
	StreamableHTTP = "streamable-http"
	SSE            = "sse"
)

// Server is one MCP server as a backend's mcp_servers lists it.
type Server struct {
	Name string
	Type string // Stdio (the default), StreamableHTTP or SSE
	// Stdio: the program, its arguments, its environment over massgen's,
	// and its working directory ("" = massgen's).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// HTTP: the endpoint and extra request headers.
	URL     string
	Headers map[string]string
	// UnsetVars are ${VAR} references of the config that were not set:
	// such a server does not start, and its error names them.
	UnsetVars []string
	// CallTimeout bounds one call (0 = Options.CallTimeout).
	CallTimeout time.Duration
	// InitTimeout bounds one start: the process or connection, the MCP
	// handshake and the listing of the tools (0 = Options.StartTimeout).
	InitTimeout time.Duration
	// Allowed and Exclude are the server's own filters (names bare or
	// prefixed); the agent's are given to Pool.Tools.
	Allowed, Exclude []string
	// Owner, when set, makes the server one agent's own process, never
	// shared with an agent that sees other files (Wrap gives it the
	// owner's view): the key of a process includes it.
	Owner string
	// Wrap, when set, rewrites a stdio server's command before it starts:
	// massgen runs the server of an agent with a workspace under
	// bubblewrap, in that agent's view of the file system (sandbox.Program).
	Wrap func(cmd *exec.Cmd) `json:"-"`
}

// key identifies a process: two agents listing the same server (filters
// aside, which are per agent) share one.
func (s Server) key() string {
	s.Allowed, s.Exclude = nil, nil
	b, _ := json.Marshal(s)
	return string(b)
}

// Options tune a Pool; zero values take the defaults.
type Options struct {
	// LogDir receives mcp_<name>_stderr.log for each stdio server; "" puts
	// them in a temporary directory removed by Close.
	LogDir string
	// StartTimeout bounds starting a server and listing its tools, unless
	// the server sets its own InitTimeout (default 30 seconds, upstream's
	// connect timeout: a server that never answers initialize held every
	// agent for 2 minutes). A server npx downloads on its first start may
	// need more: its config says so with init_timeout.
	StartTimeout time.Duration
	// CallTimeout bounds a call (default 5 minutes).
	CallTimeout time.Duration
	// ResultCap, when > 0, is the most bytes of a result the pool gives
	// on; the rest is cut, with a note saying so. 0 leaves the cut to
	// where every tool result is cut (tool.Invoke, tool.MaxResult), which
	// can keep the whole result in the agent's workspace (tool.KeepWhole).
	ResultCap int
	// BreakerFailures failures in a row pause a server for BreakerCooldown
	// (defaults 3 and 1 minute).
	BreakerFailures int
	BreakerCooldown time.Duration
	// RetryBackoff is how long a server that failed to start waits before
	// RetryFailed tries it again, doubled for each further failure
	// (default 10 seconds).
	RetryBackoff time.Duration
	// Environ is the environment stdio servers start from (default: PATH,
	// HOME, USER, LOGNAME, SHELL and TERM of the process's, as the MCP
	// SDKs do); a server's env is set over it.
	Environ []string
	// Warn hears what a user should know that is not an error: a filter
	// that matches no tool, a tool name that had to be changed.
	Warn func(msg string)
	// LeftOut hears, as an agent's tools are built (before its turn goes
	// on), each of its servers that did not start; the warning says why.
	LeftOut func(LeftOutServer)
}

// Defaults.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultCallTimeout     = 5 * time.Minute
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = time.Minute
	DefaultRetryBackoff    = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.BreakerFailures <= 0 {
		o.BreakerFailures = DefaultBreakerFailures
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = DefaultBreakerCooldown
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.LeftOut == nil {
		o.LeftOut = func(LeftOutServer) {}
	}
	return o
}
