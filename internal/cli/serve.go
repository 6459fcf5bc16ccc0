package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/examples"
	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/redact"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/store"
	"github.com/massgen/massgen/internal/webui"
)

// ServeOptions are the defaults of the runs NewServeRunner starts.
type ServeOptions struct {
	// Config is what the `massgen` model runs: a file or @examples/NAME;
	// "" = the CLI's discovery (./.massgen/config.yaml, …, keys set).
	Config string
	// DefaultModel, when set, makes the `massgen` model run this single
	// model (quick mode) instead of Config.
	DefaultModel string
	NoLogs       bool   // write no log directories (benchmarks)
	LogDir       string // root of the log directories; default .massgen/massgen_logs
	Debug        bool   // each run's events to stderr, as --debug
}

// ServeRunner runs massgen serve's requests: each one is an app.Execute
// with the usual logs, its events passed to the request's observer.
// Requests for the same config share one team (app.TeamCache). Close it
// once the server has shut down.
//
// It lives here, not in internal/server, because it is a translation
// between the two: server knows HTTP and its own RunRequest, app knows
// runs, and neither needs the other (server's tests run on fake runners,
// and app must not import server).
type ServeRunner struct {
	env   app.Env
	o     ServeOptions
	teams *app.TeamCache
	// warned are the warning lines already printed on the server's stderr:
	// runs of a cached team carry its config's warnings in their events
	// every time, and the operator reads each once.
	warned sync.Map
}

// NewServeRunner returns the server's runner. env is copied; its Stderr
// (config warnings, --debug output) is shared by concurrent runs and is
// serialised here.
func NewServeRunner(env *Env, o ServeOptions) *ServeRunner {
	return &ServeRunner{env: serverEnv(env), o: o, teams: app.NewTeamCache()}
}

// serverEnv is the environment of a server's runs (massgen serve, massgen
// mcp): the .env files read once, not on every request, and a Stderr that
// concurrent runs may share.
func serverEnv(env *Env) app.Env {
	base := *env.app()
	base.WithDefaults()
	if getenv, err := app.LoadEnv(&base); err == nil {
		base.Getenv, base.DotEnvLoaded = getenv, true
	}
	base.Stderr = &syncWriter{w: base.Stderr}
	return base
}

// Close stops the shared teams (the in-process simulators of `type: sim`
// agents) once the runs using them have ended.
func (s *ServeRunner) Close() { s.teams.Close() }

// Run is a server.Runner.
func (s *ServeRunner) Run(ctx context.Context, r server.RunRequest) (*server.RunResult, error) {
	o := s.o
	rq := app.Request{
		Question: r.Question,
		Team:     app.Team{Teams: s.teams},
		Client: app.Client{
			History:     r.History,
			ClientTools: r.Tools,
		},
		Logging: app.Logging{
			NoLogs: o.NoLogs,
			LogDir: o.LogDir,
			Debug:  o.Debug,
			Args:   []string{"serve"},
		},
		Resume: app.Resume{PreviousTurn: r.PreviousLogDir},
	}
	rq.Seed, rq.SeedVotes = carriedFrom(r.ResumeFrom)
	if f := r.Output; f != nil {
		rq.FinalFormat = &app.FinalFormat{Instruction: f.Instruction(), Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	switch {
	case r.Config != "":
		rq.Config = r.Config
	case r.Model != "":
		if provider.InferType(r.Model) == "" {
			return nil, &server.Error{Status: http.StatusNotFound, Param: "model", Code: "model_not_found",
				Message: fmt.Sprintf("The model '%s' does not exist: use massgen, massgen/<config> (GET /v1/models lists them), "+
					"or a model name whose provider massgen can tell (gpt-…, claude-…, gemini-…, grok-…, groq/…, sim-…).", r.Model)}
		}
		rq.Model, rq.Params = r.Model, r.Params
	case o.DefaultModel != "":
		rq.Model, rq.Params = o.DefaultModel, r.Params
	default:
		rq.Config = o.Config
	}
	// Clients see coordination as progress lines and the final answer as
	// content: the agents' streamed turns would only cost a wake-up each.
	rq.ObserveSkips = []event.Type{event.TypeTextDelta, event.TypeReasoningDelta, event.TypeTurnEnded}
	rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
		if r.Started != nil {
			r.Started(info.LogDir, sub.View(), info.Events)
		}
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if w, ok := e.(event.Warning); ok {
				if _, seen := s.warned.LoadOrStore(w.Line(), true); !seen {
					fmt.Fprintln(s.env.Stderr, w.Line())
				}
			}
			if r.Observe != nil {
				r.Observe(e)
			}
		}
	}
	env := s.env
	if r.TraceParent != "" {
		// The client's trace context, as the variables of the OpenTelemetry
		// environment carrier: the run's spans join the client's trace.
		getenv := env.Getenv
		env.Getenv = func(k string) string {
			switch k {
			case "TRACEPARENT":
				return r.TraceParent
			case "TRACESTATE":
				return r.TraceState
			}
			return getenv(k)
		}
	}
	out, err := app.Execute(ctx, &env, rq)
	if out != nil {
		for _, w := range out.LateWarnings {
			fmt.Fprintln(s.env.Stderr, w)
		}
	}
	if err != nil {
		if app.KindOf(err) == app.KindConfig {
			return nil, &server.Error{Status: http.StatusBadRequest, Code: "invalid_config", Message: err.Error(), Err: err}
		}
		return nil, err
	}
	return &server.RunResult{Status: out.Status, Final: out.Final, Winner: out.Winner, LogDir: out.LogDir,
		ToolCalls: out.ToolCalls, Usage: out.TotalUsage(), Err: out.Err, Failures: out.Failures,
		Fallback: out.Fallback, GraceExpired: out.GraceExpired}, nil
}

// carriedFrom is what a run resumed from earlier attempts carries: the
// answers and last votes of the attempt whose replay log holds the most
// answers (the latest of equals). An attempt killed before its log held
// anything loses to the one before it.
func carriedFrom(dirs []string) (seeds []coord.Seed, votes []coord.Vote) {
	for _, d := range dirs {
		if s, v, err := runlog.Carried(d); err == nil && len(s) >= len(seeds) && len(s) > 0 {
			seeds, votes = s, v
		}
	}
	return seeds, votes
}

// ServeConfigs maps model ids to configs: "massgen/<name>" for every
// shipped example and for every *.yaml (or *.yml) in dir, if given; a file
// in dir wins over an example of the same name.
func ServeConfigs(dir string) (map[string]string, error) {
	m := map[string]string{}
	for _, n := range examples.Names() {
		m[server.DefaultModel+"/"+n] = "@examples/" + n
	}
	if dir == "" {
		return m, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		m[server.DefaultModel+"/"+strings.TrimSuffix(e.Name(), ext)] = filepath.Join(abs, e.Name())
	}
	return m, nil
}

// ServeConfigSource returns ServeConfigs(dir) as of each call, for
// server.Deps.ConfigSource: files added to (or removed from) dir after the
// start are found without a restart. The directory is read again only
// when its modification time changed (adding, removing or renaming a file
// changes it), so a request costs one stat. A directory that cannot be
// read any more keeps its last listing.
func ServeConfigSource(dir string) (func() map[string]string, error) {
	configs, err := ServeConfigs(dir)
	if err != nil || dir == "" {
		return func() map[string]string { return configs }, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	mtime := st.ModTime()
	return func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		if st, err := os.Stat(dir); err == nil && !st.ModTime().Equal(mtime) {
			if m, err := ServeConfigs(dir); err == nil {
				configs, mtime = m, st.ModTime()
			}
		}
		return configs
	}, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// syncWriter serialises writes from concurrent runs.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

type serveFlags struct {
	host, port, config, configDir, defaultModel, apiKey, logDir, cors, allowedHosts string
	maxConcurrent, maxQueue                                                         int
	maxBody                                                                         int64
	grace                                                                           float64
	noLogs, debug, noStore                                                          bool
}

func newServeCmd(env *Env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve an OpenAI-compatible API (chat completions, Responses) that runs the team per request",
		Long: `massgen serve answers OpenAI chat completion requests (POST /v1/chat/completions) and
Responses API requests (POST /v1/responses) with a massgen run, streaming coordination
progress as reasoning (reasoning_content, or a reasoning item's summary) and the final
answer as content. Any OpenAI client works: point its base URL at http://HOST:PORT/v1.

Models: "massgen" runs the default config (--config, or --default-model for a single
model); "massgen/<name>" runs a shipped example or a file of --config-dir; any other
model id runs a single agent on that model. GET /v1/models lists them; GET /health
needs no key; GET /v1/runs/{id} is a run's status (its id is in X-Massgen-Run-Id).
Responses made with store: true are kept for previous_response_id, item_reference and
GET/DELETE /v1/responses/{id}, in memory and in .massgen/sessions.db of the working
directory, so that they outlive a restart (--no-store: in memory only).

Safety: it listens on 127.0.0.1 only, unless --host says otherwise. Requests must be
addressed to the listen address, localhost (or, listening on 0.0.0.0 or a public
address, the machine's name or an IP address): a web page that re-points its own
name at this machine (DNS rebinding) gets 403. Behind a proxy that keeps its own
name in the Host header, add that name with --allowed-hosts. POST bodies must be sent
with Content-Type: application/json (others get 415), so that a web page cannot start
a run with a form. Browsers may read the answers only from --cors-origins. Set
--api-key whenever other machines can reach the server.

Environment (flags win): MASSGEN_SERVER_HOST, MASSGEN_SERVER_PORT,
MASSGEN_SERVER_DEFAULT_CONFIG, MASSGEN_SERVER_DEFAULT_MODEL, MASSGEN_SERVER_API_KEY,
MASSGEN_SERVER_CORS_ORIGINS, MASSGEN_SERVER_ALLOWED_HOSTS, MASSGEN_SERVER_DEBUG.
Provider API keys come from the environment and .env files, as for a run.`,
		Example: `  # Try it without any API key, on the built-in simulator:
  massgen serve --config @examples/sim_three_agents
  curl -s localhost:4000/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"massgen","messages":[{"role":"user","content":"What is the capital of France?"}]}'

  # One real model behind the "massgen" id, a key required, on a free port:
  massgen serve --default-model gpt-4o-mini --api-key s3cret --port 0

  # Every YAML file of ./teams served as massgen/<name>, for a browser app:
  massgen serve --config-dir ./teams --cors-origins https://app.example.com

  # Reachable from other machines, behind a proxy that serves it as massgen.example.com:
  massgen serve --host 0.0.0.0 --api-key s3cret --allowed-hosts massgen.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd, env, f)
		},
	}
	// A `word` in a usage string is the flag's value placeholder in --help.
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "`HOST` to listen on: an address or name (0.0.0.0: every interface)")
	fl.StringVar(&f.port, "port", "4000", "`PORT` to listen on (0: any free port, printed at start)")
	fl.StringVar(&f.config, "config", "", "`FILE` or @examples/NAME that the massgen model runs (default: discovery, as for a run)")
	fl.StringVar(&f.configDir, "config-dir", "", "`DIR` whose *.yaml and *.yml files are served as models massgen/<name> (files added later are found without a restart)")
	fl.StringVar(&f.defaultModel, "default-model", "", "`MODEL` the massgen model runs as a single agent, instead of a config")
	fl.StringVar(&f.apiKey, "api-key", "", "`KEY` clients must send as 'Authorization: Bearer KEY' on /v1/ routes (default: none needed)")
	fl.StringVar(&f.cors, "cors-origins", "", "`ORIGINS` browsers may call the API from, comma-separated, e.g. https://app.example.com ('*': any; default: none)")
	fl.StringVar(&f.allowedHosts, "allowed-hosts", "", "`HOSTS` requests may be addressed to besides the listen address and localhost, comma-separated (a proxy's name; '*': any)")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", server.DefaultMaxConcurrent, "`N` runs at once")
	fl.IntVar(&f.maxQueue, "max-queue", server.DefaultMaxQueue, "`N` requests that may wait for a run slot (0: none); beyond that they get 429")
	fl.Int64Var(&f.maxBody, "max-body-bytes", server.DefaultMaxBodyBytes, "`BYTES` a request body may hold; larger ones get 413")
	fl.Float64Var(&f.grace, "shutdown-grace", 30, "`SECONDS` runs in flight get to finish on Ctrl+C or SIGTERM before they are cancelled")
	fl.BoolVar(&f.noLogs, "no-logs", false, "write no log directory per run")
	fl.StringVar(&f.logDir, "log-dir", "", "`DIR` under which each run writes its log directory (default .massgen/massgen_logs)")
	fl.BoolVar(&f.debug, "debug", false, "log every request and each run's events to stderr")
	fl.BoolVar(&f.noStore, "no-store", false, "keep Responses (for previous_response_id, item_reference, GET /v1/responses/{id}) in memory only, not in .massgen/sessions.db")
	return cmd
}

func serve(cmd *cobra.Command, env *Env, f serveFlags) error {
	if env.WorkDir == "" {
		env.WorkDir, _ = os.Getwd()
	}
	getenv, err := app.LoadEnv(env.app())
	if err != nil {
		return err
	}
	fromEnv := func(flag string, dst *string, name string) {
		if v := getenv(name); v != "" && !cmd.Flags().Changed(flag) {
			*dst = v
		}
	}
	fromEnv("host", &f.host, "MASSGEN_SERVER_HOST")
	fromEnv("port", &f.port, "MASSGEN_SERVER_PORT")
	fromEnv("config", &f.config, "MASSGEN_SERVER_DEFAULT_CONFIG")
	fromEnv("default-model", &f.defaultModel, "MASSGEN_SERVER_DEFAULT_MODEL")
	fromEnv("api-key", &f.apiKey, "MASSGEN_SERVER_API_KEY")
	redact.Secret(f.apiKey) // never echoed back, in an error or a log line
	fromEnv("cors-origins", &f.cors, "MASSGEN_SERVER_CORS_ORIGINS")
	fromEnv("allowed-hosts", &f.allowedHosts, "MASSGEN_SERVER_ALLOWED_HOSTS")
	if v := getenv("MASSGEN_SERVER_DEBUG"); v != "" && !cmd.Flags().Changed("debug") {
		f.debug, _ = strconv.ParseBool(v)
	}
	if f.config != "" && f.defaultModel != "" {
		return usageErr("--config and --default-model both choose what the `massgen` model runs: give one")
	}
	if f.maxConcurrent < 1 || f.maxQueue < 0 {
		return usageErr("--max-concurrent must be at least 1 and --max-queue at least 0")
	}
	if f.maxBody < 1 {
		return usageErr("--max-body-bytes must be at least 1")
	}
	if f.grace != 0 { // 0: runs in flight are cancelled at once
		if _, err := config.Seconds("--shutdown-grace", f.grace); err != nil {
			return usageErr("%v", err)
		}
	}
	configs, err := ServeConfigSource(f.configDir)
	if err != nil {
		return usageErr("--config-dir: %v", err)
	}
	// Check the default config now, so that a typo fails at start rather
	// than on every request. Discovery may legitimately find nothing (no
	// key set): the massgen/<example> models still work, so only warn.
	probe := app.Request{Team: app.Team{Config: f.config, Model: f.defaultModel}}
	if _, err := app.ResolveConfig(env.app(), &probe, getenv); err != nil {
		if f.config != "" || f.defaultModel != "" {
			return err
		}
		fmt.Fprintf(env.Stderr, "warning: the `massgen` model has no config yet (requests for it will fail): %v\n", err)
	}

	level := slog.LevelInfo
	if f.debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: env.Stderr}, &slog.HandlerOptions{Level: level}))
	runner := NewServeRunner(env, ServeOptions{Config: f.config, DefaultModel: f.defaultModel, NoLogs: f.noLogs,
		LogDir: f.logDir, Debug: f.debug})
	defer runner.Close() // after Shutdown: no run uses the teams any more
	// Responses are kept in the sessions database too, so that they
	// outlive a restart (closed after Shutdown: no request uses it).
	var db *store.Store
	if !f.noStore {
		if db, err = store.Open(cmd.Context(), store.DefaultPath(env.WorkDir)); err != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("%w (--no-store keeps Responses in memory only)", err)}
		}
		defer db.Close()
	}
	// The Web UI at /ui/, behind the same Host check; its data needs the
	// API key when there is one.
	uiConfigs, uiDefault, err := webConfigs(f.configDir, f.config, env.WorkDir)
	if err != nil {
		return usageErr("--config-dir: %v", err)
	}
	// The page also follows the runs API clients start (set once srv is).
	var srv *server.Server
	apiRuns := func() []webui.APIRun {
		var out []webui.APIRun
		for _, r := range srv.Runs() {
			out = append(out, webui.APIRun{ID: r.ID, Model: r.Model, Status: r.Status, Winner: r.Winner, LogDir: r.LogDir,
				Created: r.Created, Events: r.Events})
		}
		return out
	}
	ui := webui.New(webui.Deps{Env: serverEnv(env), Configs: uiConfigs, DefaultConfig: uiDefault, LogDir: f.logDir,
		Token: f.apiKey, MaxRuns: f.maxConcurrent, Version: app.Version, Logger: logger, APIRuns: apiRuns})
	srv = server.New(server.Deps{
		UI:           ui.Handler("/ui"),
		Responses:    db,
		Run:          runner.Run,
		ConfigSource: configs, Version: app.Version, APIKey: f.apiKey, CORSOrigins: splitList(f.cors),
		ListenHost: f.host, AllowedHosts: splitList(f.allowedHosts),
		MaxConcurrent: f.maxConcurrent, MaxQueue: f.maxQueue, MaxBodyBytes: f.maxBody, Logger: logger,
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, f.port))
	if err != nil {
		return &exitError{code: ExitExecution, err: fmt.Errorf("cannot listen: %w", err)}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	what := "the default config"
	switch {
	case f.defaultModel != "":
		what = "model " + f.defaultModel
	case f.config != "":
		what = f.config
	}
	auth := "no API key required"
	if f.apiKey != "" {
		auth = "API key required"
	}
	fmt.Fprintf(env.Stderr, "massgen serve: listening on http://%s (OpenAI base URL http://%s/v1; %s)\n", ln.Addr(), ln.Addr(), auth)
	fmt.Fprintf(env.Stderr, "massgen serve: model massgen runs %s; also %s\n", what, strings.Join(slices.Sorted(maps.Keys(configs())), ", "))
	fmt.Fprintf(env.Stderr, "massgen serve: Web UI at http://%s/ui/ (%s)\n", ln.Addr(), map[bool]string{true: "sign in with the API key", false: "no key needed"}[f.apiKey != ""])
	// Background responses a previous process left in flight (it stopped
	// or was killed) carry on from their logs.
	if n, err := srv.ResumeBackground(cmd.Context()); err != nil {
		fmt.Fprintf(env.Stderr, "massgen serve: warning: cannot read the background responses left in flight: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(env.Stderr, "massgen serve: carrying on %s left in flight, from %s\n", count(n, "background response"), map[bool]string{true: "its log", false: "their logs"}[n == 1])
	}

	ctx := cmd.Context()
	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitExecution, err: fmt.Errorf("server stopped: %w", err)}
	}
	fmt.Fprintf(env.Stderr, "massgen serve: shutting down; runs in flight get %gs to finish (Ctrl+C again to stop at once)\n", f.grace)
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(f.grace*float64(time.Second)))
	defer cancel()
	if err := srv.Shutdown(gctx); err != nil {
		fmt.Fprintf(env.Stderr, "massgen serve: %v\n", err)
	}
	if err := ui.Shutdown(gctx); err != nil {
		fmt.Fprintf(env.Stderr, "massgen serve: web UI: %v\n", err)
	}
	hctx, cancel2 := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel2()
	if err := hs.Shutdown(hctx); err != nil {
		_ = hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: ExitExecution, err: err}
	}
	fmt.Fprintln(env.Stderr, "massgen serve: stopped")
	return nil
}
