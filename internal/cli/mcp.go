package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/mcpserver"
)

type mcpFlags struct {
	http, config, logDir string
	noLogs, debug        bool
}

func newMCPCmd(env *Env) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve massgen as an MCP server (stdio, or streamable HTTP with --http) for Claude Code, Codex, Cursor, …",
		Long: `massgen mcp makes a massgen team a tool of any MCP client. It serves two tools:

  massgen_run       {question, config?, models?, timeout_seconds?} runs a team and returns
                    the final answer (text), with structured content {final_answer, winner,
                    status, votes, log_dir, usage, cost}. Each coordination step is sent as
                    a progress notification; cancelling the call stops the team's requests.
  massgen_examples  lists the example configs massgen_run's config accepts.

By default it speaks MCP over stdin and stdout (the client starts it). With --http it
serves streamable HTTP at http://ADDR/mcp instead, on a loopback address only (it has no
authentication); requests addressed to any other host name (DNS rebinding) and
cross-origin browser requests get 403.

Provider API keys come from the environment and .env files, as for a run.`,
		Example: `  # Claude Code: add it as a tool (on the simulator, no API key needed)
  claude mcp add massgen -- massgen mcp --config @examples/sim_three_agents

  # Streamable HTTP on a fixed port
  massgen mcp --http 127.0.0.1:8765 --config my_team.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMCP(cmd.Context(), env, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on `ADDR` (127.0.0.1:PORT, or PORT; port 0: any free port, printed at start) instead of stdio")
	fl.StringVar(&f.config, "config", "", "`FILE` or @examples/NAME massgen_run uses when a call names no team (default: discovery, as for a run)")
	fl.BoolVar(&f.noLogs, "no-logs", false, "write no log directory per run")
	fl.StringVar(&f.logDir, "log-dir", "", "`DIR` under which each run writes its log directory (default .massgen/massgen_logs)")
	fl.BoolVar(&f.debug, "debug", false, "log the MCP server's own diagnostics to stderr")
	return cmd
}

func serveMCP(ctx context.Context, env *Env, f mcpFlags) error {
	runEnv := serverEnv(env)
	if f.config != "" {
		// A typo fails at start, not on every call.
		if _, err := app.ResolveConfig(&runEnv, &app.Request{Config: f.config}, runEnv.Getenv); err != nil {
			return err
		}
	}
	var logger *slog.Logger
	if f.debug {
		logger = slog.New(slog.NewTextHandler(runEnv.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s := mcpserver.New(&runEnv, mcpserver.Options{Config: f.config, NoLogs: f.noLogs, LogDir: f.logDir, Logger: logger})
	defer s.Close()
	if f.http == "" {
		// stdout is the protocol: everything else goes to stderr.
		return s.ServeStdio(ctx, env.Stdin, env.Stdout)
	}
	return serveMCPHTTP(ctx, env.Stderr, s, f.http)
}

// serveMCPHTTP serves s over streamable HTTP on addr until ctx ends.
func serveMCPHTTP(ctx context.Context, stderr io.Writer, s *mcpserver.Server, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "127.0.0.1", addr // just a port
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return usageErr("--http %s: massgen mcp listens on a loopback address only (127.0.0.1 or ::1): it has no authentication", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return &exitError{code: ExitExecution, err: fmt.Errorf("cannot listen: %w", err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stderr, "massgen mcp: listening on http://%s/mcp (streamable HTTP)\n", ln.Addr())
	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitExecution, err: fmt.Errorf("server stopped: %w", err)}
	}
	// Runs in flight are cancelled (s.Close); the clients' open event
	// streams are closed after a short wait.
	s.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: ExitExecution, err: err}
	}
	fmt.Fprintln(stderr, "massgen mcp: stopped")
	return nil
}
