package mcpserver

import (
	"context"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/app"
)

// Options are the server's defaults for the runs it starts.
type Options struct {
	// Config is the team massgen_run uses when a call names none: a file or
	// @examples/NAME; "" = the command line's discovery
	// (./.massgen/config.yaml, ~/.config/massgen/config.yaml, the keys set).
	Config string
	// ConfigDir is the directory whose *.yaml and *.yml files a call may
	// name (--config-dir); "" = none.
	ConfigDir string
	// AllowConfigPaths lets a call name any config file and write any
	// config inline (--allow-config-paths): whoever can call the tool can
	// then run commands as this process's user. By default a call may name
	// only an example, a file of ConfigDir or an inline team of models
	// (configs.go).
	AllowConfigPaths bool
	NoLogs           bool   // write no log directory per run
	LogDir           string // root of the log directories; default .massgen/massgen_logs
	// Logger receives the SDK's own diagnostics (nil: none). In stdio mode
	// stdout is the protocol: nothing else may be written there.
	Logger *slog.Logger
}

// Server is massgen as an MCP server. One Server serves any number of
// sessions (one over stdio, several over HTTP); calls for the same config
// share one team (app.TeamCache). Close it once it serves no more.
type Server struct {
	mcp   *mcp.Server
	env   app.Env
	o     Options
	teams *app.TeamCache
	// stop ends the runs in flight when the server shuts down: a call's own
	// context is the session's, which an HTTP server's shutdown leaves alone.
	stop    context.Context
	stopped context.CancelFunc
}

// New returns a server whose runs see env (copied; its Stderr, which gets
// config warnings, must be safe for concurrent writes).
func New(env *app.Env, o Options) *Server {
	s := &Server{env: *env, o: o, teams: app.NewTeamCache()}
	s.env.WithDefaults()
	s.stop, s.stopped = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "massgen", Title: "MassGen", Version: app.Version}, &mcp.ServerOptions{
		Instructions: "massgen_run asks a team of LLM agents a question: they answer in parallel, refine each other's " +
			"answers and vote; the winning answer is returned. It takes minutes, not seconds, and reports progress.",
		Logger: o.Logger,
	})
	mcp.AddTool(s.mcp, runTool, s.run)
	mcp.AddTool(s.mcp, examplesTool, s.listExamples)
	return s
}

// ServeStdio serves one session over r and w (a client's pipes) until the
// client closes r or ctx ends; runs in flight are cancelled either way.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopCloser{w}})
	if ctx.Err() != nil {
		return nil // asked to stop
	}
	return err
}

// Connect serves one session over t (in-memory transports in tests).
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// Close cancels the runs in flight, ends the sessions (an HTTP session
// outlives its requests) and stops the shared teams.
func (s *Server) Close() {
	s.stopped()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	s.teams.Close()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
