package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/mcpserver"
	"github.com/massgen/massgen/internal/server"
)

type mcpFlags struct {
	http, config, configDir, logDir, apiKey, apiKeyFile, allowedHosts string
	noLogs, debug, noAuth, allowConfigPaths                           bool
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
  massgen_examples  lists the configs massgen_run's config may name (examples, --config-dir).

By default it speaks MCP over stdin and stdout (the client starts it). With --http it
serves streamable HTTP at http://ADDR/mcp instead.

Safety. Whoever calls massgen_run chooses its config, and a config can run commands
(an MCP server's command, a command tool, an agent's shell): the caller may be a model
that read a hostile web page. So massgen_run's config may only be @examples/NAME (or an
example's name), the name of a *.yaml file in --config-dir (symbolic links must stay
inside it), or a config written as YAML text that is a team of models only (no
mcp_servers, custom_tools, command line, context_paths, cwd, base_url, api_key or
${VAR}). Any other path is refused without being opened; --allow-config-paths lifts
all of this, for callers you trust as yourself. --config is yours, and is not limited.

Over HTTP, every request must send an API key: 'Authorization: Bearer KEY' (else 401).
The key is --api-key (or MASSGEN_MCP_API_KEY), else the one kept in --api-key-file
(default $XDG_STATE_HOME/massgen/mcp_api_key, i.e. ~/.local/state/massgen/mcp_api_key),
made at the first start (mode 0600) and printed then. --no-auth serves without a key,
on a loopback address only. Requests must be addressed to the listen address or
localhost (or, listening beyond loopback, the machine's name or an IP), as for massgen
serve: a web page that re-points its own name at this machine (DNS rebinding) gets
403, and so do cross-origin browser requests. Add a proxy's name with --allowed-hosts.

Environment (flags win): MASSGEN_MCP_API_KEY, MASSGEN_MCP_ALLOWED_HOSTS. Provider API
keys come from the environment and .env files, as for a run.`,
		Example: `  # Claude Code: add it as a tool (on the simulator, no API key needed)
  claude mcp add massgen -- massgen mcp --config @examples/sim_three_agents

  # Your own teams, by name: massgen_run {"config": "research"} runs ./teams/research.yaml
  massgen mcp --config-dir ./teams

  # Streamable HTTP on a fixed port; the first start prints the key to send
  massgen mcp --http 127.0.0.1:8765 --config my_team.yaml
  claude mcp add --transport http massgen http://127.0.0.1:8765/mcp \
    --header "Authorization: Bearer $(cat ~/.local/state/massgen/mcp_api_key)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMCP(cmd, env, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on `ADDR` (HOST:PORT, or PORT on 127.0.0.1; port 0: any free port, printed at start) instead of stdio")
	fl.StringVar(&f.config, "config", "", "`FILE` or @examples/NAME massgen_run uses when a call names no team (default: discovery, as for a run)")
	fl.StringVar(&f.configDir, "config-dir", "", "`DIR` whose *.yaml and *.yml files massgen_run's config may name (by file name, with or without .yaml)")
	fl.BoolVar(&f.allowConfigPaths, "allow-config-paths", false, "let massgen_run's config be any file path, and inline configs use every feature: whoever can call the tool can then run commands as you")
	fl.StringVar(&f.apiKey, "api-key", "", "`KEY` HTTP clients must send as 'Authorization: Bearer KEY' (default: the key of --api-key-file)")
	fl.StringVar(&f.apiKeyFile, "api-key-file", "", "`FILE` keeping the HTTP API key, made (mode 0600) when missing (default $XDG_STATE_HOME/massgen/mcp_api_key)")
	fl.BoolVar(&f.noAuth, "no-auth", false, "serve HTTP without an API key (loopback addresses only): any local user may then run teams on your keys")
	fl.StringVar(&f.allowedHosts, "allowed-hosts", "", "`HOSTS` HTTP requests may be addressed to besides the listen address and localhost, comma-separated (a proxy's name; '*': any)")
	fl.BoolVar(&f.noLogs, "no-logs", false, "write no log directory per run")
	fl.StringVar(&f.logDir, "log-dir", "", "`DIR` under which each run writes its log directory (default .massgen/massgen_logs)")
	fl.BoolVar(&f.debug, "debug", false, "log the MCP server's own diagnostics to stderr")
	return cmd
}

func serveMCP(cmd *cobra.Command, env *Env, f mcpFlags) error {
	ctx := cmd.Context()
	runEnv := serverEnv(env)
	for flag, v := range map[string]*string{"api-key": &f.apiKey, "allowed-hosts": &f.allowedHosts} {
		name := "MASSGEN_MCP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
		if e := runEnv.Getenv(name); e != "" && !cmd.Flags().Changed(flag) {
			*v = e
		}
	}
	if f.http == "" {
		for _, flag := range []string{"api-key", "api-key-file", "no-auth", "allowed-hosts"} {
			if cmd.Flags().Changed(flag) {
				return usageErr("--%s is for --http: over stdio, the client that starts massgen mcp is the only one to reach it", flag)
			}
		}
	}
	if f.noAuth && (f.apiKey != "" || f.apiKeyFile != "") {
		return usageErr("--no-auth and --api-key/--api-key-file contradict each other: give one")
	}
	if f.configDir != "" {
		if st, err := os.Stat(f.configDir); err != nil || !st.IsDir() {
			return usageErr("--config-dir %s: not a directory", f.configDir)
		}
	}
	if f.config != "" {
		// A typo fails at start, not on every call.
		if _, err := app.ResolveConfig(&runEnv, &app.Request{Team: app.Team{Config: f.config}}, runEnv.Getenv); err != nil {
			return err
		}
	}
	var logger *slog.Logger
	if f.debug {
		logger = slog.New(slog.NewTextHandler(runEnv.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s := mcpserver.New(&runEnv, mcpserver.Options{Config: f.config, ConfigDir: f.configDir, AllowConfigPaths: f.allowConfigPaths,
		NoLogs: f.noLogs, LogDir: f.logDir, Logger: logger})
	defer s.Close()
	if f.allowConfigPaths {
		fmt.Fprintln(runEnv.Stderr, "massgen mcp: warning: --allow-config-paths: massgen_run runs any config its callers name or write, "+
			"and a config can run commands as you")
	}
	if f.http == "" {
		// stdout is the protocol: everything else goes to stderr.
		return s.ServeStdio(ctx, env.Stdin, env.Stdout)
	}
	return serveMCPHTTP(ctx, &runEnv, s, f)
}

// serveMCPHTTP serves s over streamable HTTP on f.http until ctx ends.
func serveMCPHTTP(ctx context.Context, env *app.Env, s *mcpserver.Server, f mcpFlags) error {
	stderr := env.Stderr
	host, port, err := net.SplitHostPort(f.http)
	if err != nil {
		host, port = "127.0.0.1", f.http // just a port
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if f.noAuth && !server.IsLoopback(host) {
		return usageErr("--http %s --no-auth: without an API key, massgen mcp listens on a loopback address only (127.0.0.1 or ::1)", f.http)
	}
	o := mcpserver.HTTPOptions{NoAuth: f.noAuth, APIKey: f.apiKey}
	policy := server.NewHostPolicy(host, splitList(f.allowedHosts))
	o.AllowHost = policy.Allows
	var keyNote string
	if !f.noAuth && o.APIKey == "" {
		file := f.apiKeyFile
		if file == "" {
			file = defaultMCPKeyFile(env)
		}
		key, made, err := mcpKey(file)
		if err != nil {
			return &exitError{code: ExitExecution, err: err}
		}
		o.APIKey = key
		if made {
			keyNote = fmt.Sprintf("massgen mcp: made an API key, kept in %s (mode 0600); clients must send the header\n"+
				"  Authorization: Bearer %s\n", file, key)
		} else {
			keyNote = fmt.Sprintf("massgen mcp: API key from %s; clients must send the header 'Authorization: Bearer KEY'\n", file)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return &exitError{code: ExitExecution, err: fmt.Errorf("cannot listen: %w", err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler(o))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	auth := "API key required"
	if f.noAuth {
		auth = "no API key: --no-auth"
	}
	fmt.Fprintf(stderr, "massgen mcp: listening on http://%s/mcp (streamable HTTP; %s)\n%s", ln.Addr(), auth, keyNote)
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

// defaultMCPKeyFile is where massgen mcp keeps its HTTP API key:
// $XDG_STATE_HOME/massgen/mcp_api_key, ~/.local/state/massgen/mcp_api_key
// without it, and .massgen/mcp_api_key of the working directory without a
// home.
func defaultMCPKeyFile(env *app.Env) string {
	if d := env.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "massgen", "mcp_api_key")
	}
	if home := env.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "massgen", "mcp_api_key")
	}
	return filepath.Join(env.WorkDir, ".massgen", "mcp_api_key")
}

// mcpKey reads the API key kept in file, or makes one there (made): 32
// random bytes, written with mode 0600 in a directory made 0700. A file
// that others may read, or that is not a plain file, is refused rather
// than trusted: its key may be known.
func mcpKey(file string) (key string, made bool, err error) {
	st, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return "", false, fmt.Errorf("cannot keep the API key: %w", err)
		}
		key = rand.Text() + rand.Text() // 2×26 base32 characters: 260 bits
		fh, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return mcpKey(file) // another massgen mcp made it first
		}
		if err != nil {
			return "", false, fmt.Errorf("cannot keep the API key: %w", err)
		}
		_, err = fh.WriteString(key + "\n")
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(file)
			return "", false, fmt.Errorf("cannot keep the API key: %w", err)
		}
		return key, true, nil
	case err != nil:
		return "", false, fmt.Errorf("cannot read the API key: %w", err)
	case !st.Mode().IsRegular():
		return "", false, fmt.Errorf("the API key file %s is not a regular file (a symbolic link?): remove it, and a new key is made", file)
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
		return "", false, fmt.Errorf("the API key file %s can be read or written by other users (mode %v): "+
			"remove it (a new key is made) or chmod 600 it", file, st.Mode().Perm())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", false, fmt.Errorf("cannot read the API key: %w", err)
	}
	if key = strings.TrimSpace(string(data)); key == "" {
		return "", false, fmt.Errorf("the API key file %s is empty: remove it, and a new key is made", file)
	}
	return key, false, nil
}
