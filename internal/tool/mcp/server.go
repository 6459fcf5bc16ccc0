package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/redact"
	"github.com/massgen/massgen/internal/tool"
)

// server is one running MCP server, shared by the agents that list it.
type server struct {
	cfg     Server
	opts    *Options
	logPath string // its stderr (stdio); set before its first start
	changed func() // told when its tools may have changed (a restart, list_changed)

	mu      sync.Mutex
	st      *startup    // the latest start
	tools   []*sdk.Tool // its tools, from the last listing
	fails   int         // starts failed in a row
	conn    *conn       // the live connection; nil after Close
	closed  bool
	breaker breaker
	bg      sync.WaitGroup // re-listings in flight, waited for by close

	progress sync.Map // progress token (string) → func(tool.Progress) of the call
	nextTok  atomic.Int64
}

// startup is one attempt to start the server: ready is closed when it
// has ended, err (why it did not start) set before. A server that failed
// gets a new startup when it is retried (Pool.RetryFailed).
type startup struct {
	ready    chan struct{}
	err      error
	failedAt time.Time
	cancel   context.CancelFunc // ends the start (set by Pool.launch under the pool's lock)
}

// conn is one connection to the server: its session and, for stdio, its
// process.
type conn struct {
	session *sdk.ClientSession
	cmd     *exec.Cmd
	cancel  context.CancelFunc // ends what the connection's context holds open (an SSE stream)
}

func newServer(cfg Server, opts *Options, changed func()) *server {
	return &server{cfg: cfg, opts: opts, changed: changed, st: &startup{ready: make(chan struct{})},
		breaker: breaker{max: opts.BreakerFailures, cooldown: opts.BreakerCooldown}}
}

// state is the latest start.
func (s *server) state() *startup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// start connects and lists the tools; st.ready is closed at the end.
func (s *server) start(ctx context.Context, st *startup) {
	defer close(st.ready)
	if err := s.connectAndList(ctx); err != nil {
		st.err, st.failedAt = err, time.Now()
		s.mu.Lock()
		s.fails++
		s.mu.Unlock()
	}
}

// startTimeout bounds one start of s: its own init_timeout, else the
// pool's.
func (s *server) startTimeout() time.Duration {
	if s.cfg.InitTimeout > 0 {
		return s.cfg.InitTimeout
	}
	return s.opts.StartTimeout
}

func (s *server) connectAndList(ctx context.Context) error {
	limit := s.startTimeout()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	timedOut := func(err error) error {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return err
		}
		// The start's own limit, or the run's deadline (Pool.StartBy)
		// when that came first; how the process ended after that is
		// massgen's doing, not news.
		what := s.cfg.URL
		if s.cfg.Type == Stdio || s.cfg.Type == "" {
			what = fmt.Sprintf("command %q", strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " "))
		}
		return redact.Masked(fmt.Errorf("MCP server %s did not answer within its start-up limit (init_timeout %v, or the run's deadline "+
			"if sooner), so it was stopped: %s%s", s.cfg.Name, limit, what, s.stderrNote()))
	}
	c, err := s.connect(ctx)
	if err != nil {
		return timedOut(err)
	}
	tools, err := listTools(ctx, c)
	if err != nil {
		c.close()
		return timedOut(fmt.Errorf("MCP server %s started but listing its tools failed: %w%s", s.cfg.Name, err, s.stderrNote()))
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return fmt.Errorf("MCP server %s was stopped while it started", s.cfg.Name)
	}
	s.conn, s.tools, s.fails = c, tools, 0
	s.mu.Unlock()
	return nil
}

func listTools(ctx context.Context, c *conn) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// onToolsChanged hears notifications/tools/list_changed: the tools are
// listed again, in the background (a handler must not wait on its own
// connection), and the agents' tool lists are rebuilt for their next turn.
func (s *server) onToolsChanged(context.Context, *sdk.ToolListChangedRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conn
	if s.closed || c == nil {
		return
	}
	s.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.startTimeout())
		defer cancel()
		tools, err := listTools(ctx, c)
		if err != nil {
			s.opts.Warn(fmt.Sprintf("MCP server %s: its tools changed but listing them again failed: %v", s.cfg.Name, err))
			return
		}
		s.mu.Lock()
		s.tools = tools
		s.mu.Unlock()
		s.changed()
	})
}

// toolList is the tools as last listed.
func (s *server) toolList() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// wait blocks until the latest start has ended; its error says why the
// server cannot be used.
func (s *server) wait(ctx context.Context) error {
	st := s.state()
	select {
	case <-st.ready:
		return st.err
	case <-ctx.Done():
		return fmt.Errorf("waiting for MCP server %s to start: %w", s.cfg.Name, ctx.Err())
	}
}

// connect starts (stdio) or reaches (HTTP) the server and initialises a
// session. Its error names what was run and, for a process, how it ended
// and the tail of its stderr.
func (s *server) connect(ctx context.Context) (*conn, error) {
	if len(s.cfg.UnsetVars) > 0 {
		return nil, fmt.Errorf("MCP server %s cannot start: its config uses %s, which is not set; set it (in the environment or a .env file)",
			s.cfg.Name, strings.Join(s.cfg.UnsetVars, ", "))
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "massgen", Version: "1"}, &sdk.ClientOptions{
		Capabilities:                &sdk.ClientCapabilities{}, // no roots: massgen has none to offer
		ProgressNotificationHandler: s.onProgress,
		LoggingMessageHandler:       s.onLog,
		ToolListChangedHandler:      s.onToolsChanged,
	})
	c := &conn{}
	var transport sdk.Transport
	switch s.cfg.Type {
	case StreamableHTTP:
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: 2}
	case SSE:
		transport = &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}
	default:
		cmd, stderr, err := s.command()
		if err != nil {
			return nil, err
		}
		defer stderr.Close() // Connect starts the process, which has its own copy
		c.cmd = cmd
		transport = &stdioTransport{cmd: cmd}
	}
	// The context given to Connect lives as long as the connection (the
	// SSE transport holds its stream with it), so it is not ctx, which
	// only bounds the handshake.
	life, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	stop := context.AfterFunc(ctx, cancel)
	session, err := client.Connect(life, transport, nil)
	stop()
	if err == nil && ctx.Err() != nil {
		session.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		if c.cmd != nil {
			return nil, s.processErr(c.cmd, err)
		}
		return nil, fmt.Errorf("MCP server %s (%s %s) did not answer: %w", s.cfg.Name, s.cfg.Type, s.cfg.URL, err)
	}
	c.session = session
	return c, nil
}

// command prepares a stdio server's process: its own process group,
// stderr appended to its log file. The caller closes the returned file
// once the process has started: the child has its own copy.
func (s *server) command() (*exec.Cmd, *os.File, error) {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	env := s.opts.Environ
	if env == nil {
		env = defaultEnviron()
	}
	for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
		env = append(env, k+"="+s.cfg.Env[k])
	}
	cmd.Env = env
	if s.cfg.Wrap != nil {
		s.cfg.Wrap(cmd)
	}
	f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP server %s: cannot open its stderr log: %w", s.cfg.Name, err)
	}
	cmd.Stderr = f // an *os.File: the child writes it directly, no copying goroutine
	isolate(cmd)
	return cmd, f, nil
}

// inheritedVars are what a stdio server gets of massgen's environment
// when the caller gives none: the official MCP SDKs' default set
// (get_default_environment in the Python SDK), enough to find programs and
// a home for caches. Everything else, API keys above all, reaches a server
// only when its config names it in env.
var inheritedVars = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

func defaultEnviron() []string {
	var env []string
	for _, k := range inheritedVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// processErr explains a stdio server that failed to start: the command,
// how the process ended (if it did) and the tail of its stderr.
//
// Its text is masked as a provider error is (redact): a server's command
// line may carry a token, and a failing server may print its own.
func (s *server) processErr(cmd *exec.Cmd, err error) error {
	return redact.Masked(s.describeFailure(cmd, err))
}

func (s *server) describeFailure(cmd *exec.Cmd, err error) error {
	line := strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
	var ee *exec.Error
	if errors.As(err, &ee) || cmd.Process == nil {
		return fmt.Errorf("MCP server %s failed to start: command %q: %v", s.cfg.Name, line, err)
	}
	killGroup(cmd)
	how := "it did not complete the MCP handshake"
	// A failed Connect has closed its session, which waited for the
	// process: its state is known unless it would not die.
	if ps := cmd.ProcessState; ps != nil {
		how = "it exited with " + exitText(ps)
	}
	return fmt.Errorf("MCP server %s failed to start: command %q: %s (%v)%s", s.cfg.Name, line, how, err, s.stderrNote())
}

func exitText(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit code %d", ps.ExitCode())
}

// stderrNote is "; stderr (…log): <tail>" or "".
func (s *server) stderrNote() string {
	if s.logPath == "" {
		return ""
	}
	t := tailOf(s.logPath, 1500)
	if t == "" {
		return ""
	}
	return fmt.Sprintf("; its stderr (%s) ends with:\n%s", s.logPath, t)
}

// tailOf is the last n bytes of a file, trimmed.
func tailOf(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (s *server) httpClient() *http.Client {
	if len(s.cfg.Headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: s.cfg.Headers}}
}

// headerTransport adds a server's configured headers (auth tokens) to
// every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func (c *conn) close() {
	if c == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.session != nil {
			_ = c.session.Close() // closes stdin: a polite server exits
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	if c.cmd != nil {
		killGroup(c.cmd) // the whole group, children included
	}
	<-done
	if c.cancel != nil {
		c.cancel()
	}
}

func (s *server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// close stops the server for good.
func (s *server) close() {
	s.mu.Lock()
	c := s.conn
	s.conn, s.closed = nil, true
	s.mu.Unlock()
	c.close()
	s.bg.Wait() // a re-listing on the closed connection ends at once
	maskLog(s.logPath)
}

func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	f, ok := s.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	f.(func(tool.Progress))(tool.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
}

// onLog passes a server's log message to the calls in flight on it: the
// protocol does not say which call a message belongs to.
func (s *server) onLog(_ context.Context, req *sdk.LoggingMessageRequest) {
	p := req.Params
	msg := fmt.Sprintf("log %s: %v", p.Level, p.Data)
	s.progress.Range(func(_, f any) bool {
		f.(func(tool.Progress))(tool.Progress{Message: msg})
		return true
	})
}

// MaxFrame is the largest message massgen reads from a stdio MCP server.
// The SDK's own limit (16 MiB) refused a 20 MB result outright; one this
// large is read, then cut for the model (tool.MaxResult). Past it the
// call fails, saying so. Reading a message costs the SDK about 19 times
// its size in allocations (BenchmarkBigResult: 94 MB for 5 MB, 378 MB for
// 20 MB), which is why the limit is not higher.
const MaxFrame = 32 << 20

// stdioTransport is the SDK's CommandTransport with MaxFrame as its
// message limit: it starts the command and speaks newline-delimited
// JSON-RPC on its stdin and stdout.
type stdioTransport struct{ cmd *exec.Cmd }

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	return (&sdk.IOTransport{Reader: io.NopCloser(stdout), Writer: &procStdin{cmd: t.cmd, w: stdin}, MaxLineLength: MaxFrame}).Connect(ctx)
}

// procStdin is a server's stdin; closing it ends the server as the MCP
// spec asks: stdin closed, a moment to exit, then the kill (of its whole
// process group), and the process is waited for.
type procStdin struct {
	cmd *exec.Cmd
	w   io.WriteCloser
}

func (p *procStdin) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *procStdin) Close() error {
	_ = p.w.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
	}
	killGroup(p.cmd)
	return <-done
}
