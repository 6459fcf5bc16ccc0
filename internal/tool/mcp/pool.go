package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Pool is the MCP servers of one team. Add the servers, Start them, hand
// each agent its Tools, and Close the pool when the team is done. A Pool
// is safe for concurrent use.
type Pool struct {
	opts Options

	mu      sync.Mutex
	servers []*server
	byKey   map[string]*server
	logDir  string // where the stderr logs are
	tmpDir  bool   // logDir is ours, removed by Close
	started bool
	closed  bool
	wg      sync.WaitGroup
	ctx     context.Context // of the starts, cancelled by Close
	cancel  context.CancelFunc
	gen     atomic.Uint64 // bumped when a server's tools may have changed
	// deadline, when set (StartBy), ends the starts launched with it:
	// the run they are for is over by then.
	deadline time.Time
	sources  []*source // every agent's, for LeftOut
}

// NewPool makes an empty pool.
func NewPool(opts Options) *Pool {
	return &Pool{opts: opts.withDefaults(), byKey: map[string]*server{}}
}

// Handle is a server of the pool, for Tools.
type Handle struct{ s *server }

// Add registers a server; the same config added twice (by two agents) is
// one server. It starts with Start.
func (p *Pool) Add(cfg Server) (Handle, error) {
	if cfg.Type == "" {
		cfg.Type = Stdio
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Handle{}, errors.New("the MCP pool is closed")
	}
	if s, ok := p.byKey[cfg.key()]; ok {
		return Handle{s}, nil
	}
	s := newServer(cfg, &p.opts, func() { p.gen.Add(1) })
	p.servers = append(p.servers, s)
	p.byKey[cfg.key()] = s
	if p.started {
		if err := p.placeLog(s); err != nil {
			return Handle{}, err
		}
		p.launch(s, s.st)
	}
	return Handle{s}, nil
}

// Start starts every server in the background, all at once, with their
// stderr logs where Options.LogDir says; servers added later start when
// added. It does not wait: a turn waits for the servers its agent uses
// when it needs their tools.
func (p *Pool) Start() { p.StartIn("") }

// StartIn is Start with the stderr logs in dir ("" = Options.LogDir, or a
// temporary directory removed by Close). Only the first call (of Start,
// StartIn, or an agent asking for its tools) starts anything.
func (p *Pool) StartIn(dir string) { p.StartBy(dir, time.Time{}) }

// StartBy is StartIn for a pool that serves one run: no start goes on
// past deadline (zero: none), whatever the servers' own start-up limits.
func (p *Pool) StartBy(dir string, deadline time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return
	}
	if dir != "" {
		p.opts.LogDir = dir
	}
	p.deadline = deadline
	p.started = true
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, s := range p.servers {
		err := p.placeLog(s)
		if s.isClosed() {
			err = fmt.Errorf("MCP server %s was stopped before it started", s.cfg.Name)
		}
		if err != nil {
			s.st.err = err
			close(s.st.ready)
			continue
		}
		p.launch(s, s.st)
	}
}

// launch starts s in the background; p.mu is held. Each start has a
// context of its own, so that CloseOwner can end the starts of its servers
// and leave the others going.
func (p *Pool) launch(s *server, st *startup) {
	ctx, cancel := context.WithCancel(p.ctx)
	if !p.deadline.IsZero() {
		ctx, cancel = context.WithDeadline(p.ctx, p.deadline)
	}
	st.cancel = cancel
	p.wg.Go(func() {
		defer cancel()
		s.start(ctx, st)
	})
}

// RetryFailed starts again each server whose last start failed, once its
// back-off has passed (Options.RetryBackoff after the first failure,
// doubling with each failure in a row, at most 5 minutes): massgen serve
// calls it as each request begins, so a server that was down when a cached
// team was built is not left out for good. Agents see its tools from their
// next turn on.
func (p *Pool) RetryFailed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started || p.closed {
		return
	}
	now := time.Now()
	for _, s := range p.servers {
		s.mu.Lock()
		st := s.st
		if s.closed {
			s.mu.Unlock()
			continue // stopped by CloseOwner, for good
		}
		select {
		case <-st.ready:
		default:
			s.mu.Unlock()
			continue // starting
		}
		if st.err == nil || s.fails == 0 || now.Sub(st.failedAt) < p.backoff(s.fails) {
			s.mu.Unlock()
			continue
		}
		s.st = &startup{ready: make(chan struct{})}
		st = s.st
		s.mu.Unlock()
		p.gen.Add(1) // the agents' tool lists wait for this start
		p.launch(s, st)
	}
}

// backoff is how long a server that failed to start fails times in a
// row waits before it is tried again.
func (p *Pool) backoff(fails int) time.Duration {
	d := p.opts.RetryBackoff
	for i := 1; i < fails && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, maxRetryBackoff)
}

const maxRetryBackoff = 5 * time.Minute

// Close stops every server (the whole process group of a stdio one) and
// waits for them; calls in flight end with an error.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.cancel != nil {
		p.cancel()
	}
	if !p.started {
		for _, s := range p.servers { // nobody will start them: release their waiters
			s.st.err = fmt.Errorf("MCP server %s: the team was closed before it started", s.cfg.Name)
			close(s.st.ready)
		}
	}
	servers := p.servers
	p.mu.Unlock()
	p.wg.Wait() // starts end promptly once cancelled
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.close)
	}
	wg.Wait()
	if p.tmpDir {
		_ = os.RemoveAll(p.logDir)
	}
}

// CloseOwner stops for good the servers of one owner (Server.Owner, an
// agent with its own processes) and waits for them, as Close does, but
// the pool goes on: the other servers keep running, and a server added
// for that owner afterwards is a new process (with a log of its own).
// The stopped servers' stderr logs stay for CopyLogs until Close. The
// shared servers (no owner) are not anyone's to stop.
func (p *Pool) CloseOwner(owner string) {
	if owner == "" {
		return
	}
	p.mu.Lock()
	var stop []*server
	var starts []*startup
	for k, s := range p.byKey {
		if s.cfg.Owner != owner {
			continue
		}
		delete(p.byKey, k)
		stop = append(stop, s)
		st := s.state()
		if st.cancel != nil {
			st.cancel() // a start in flight ends promptly
			starts = append(starts, st)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Go(s.close)
	}
	wg.Wait()
	for _, st := range starts {
		<-st.ready // the start saw the server closed: its process is gone
	}
}

// Tools is the tool.Source of one agent: the tools of its servers, after
// the agent's filters (allowed/exclude, bare or prefixed names) and each
// server's own. Resolving it waits for those servers to start; a server
// that did not start, and a filter entry that matches nothing, are warned
// about once (Options.Warn), naming why and the tools there are.
func (p *Pool) Tools(agent string, servers []Handle, allowed, exclude []string) tool.Source {
	src := &source{pool: p, agent: agent, servers: servers, allowed: allowed, exclude: exclude}
	p.mu.Lock()
	p.sources = append(p.sources, src)
	p.mu.Unlock()
	return src
}

// LeftOutServer is a server an agent goes without: its last start failed.
type LeftOutServer struct {
	Agent, Server string
	Err           error
}

// LeftOut lists, for every agent given Tools, the servers whose latest
// start has ended in failure (those still starting are not listed): what
// a run reports as not done. Options.LeftOut hears the same as each
// agent's tools are built.
func (p *Pool) LeftOut() []LeftOutServer {
	p.mu.Lock()
	sources := slices.Clone(p.sources)
	p.mu.Unlock()
	var out []LeftOutServer
	for _, src := range sources {
		for _, h := range src.servers {
			st := h.s.state()
			if isDone(st.ready) && st.err != nil {
				out = append(out, LeftOutServer{Agent: src.agent, Server: h.s.cfg.Name, Err: st.err})
			}
		}
	}
	return out
}

type source struct {
	pool             *Pool
	agent            string
	servers          []Handle
	allowed, exclude []string

	mu  sync.Mutex
	cur *resolution
}

// resolution is one building of an agent's tools, for the pool's
// generation gen: done is closed when tools is set.
type resolution struct {
	gen   uint64
	done  chan struct{}
	tools []tool.Tool
}

// Tools waits for the agent's servers and builds its tools. A later call
// (the next turn) returns the same tools at once, unless a server's tools
// have changed since (a server restarted, or it said its list changed):
// then they are built again.
func (src *source) Tools(ctx context.Context) ([]tool.Tool, error) {
	src.pool.Start() // a team that was never told to start: start now
	src.mu.Lock()
	r := src.cur
	if gen := src.pool.gen.Load(); r == nil || (r.gen != gen && isDone(r.done)) {
		r = &resolution{gen: gen, done: make(chan struct{})}
		src.cur = r
		go src.resolve(r)
	}
	src.mu.Unlock()
	select {
	case <-r.done:
		return r.tools, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the MCP servers of agent %s: %w", src.agent, ctx.Err())
	}
}

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// resolve runs without a caller's context, so that one cancelled turn
// does not spoil the result for the next: each server's start is bounded
// by its own timeout. A server that did not start is left out with a
// warning that says why (upstream skips failed servers too): one broken
// server must not silence an agent that has others, or none.
func (src *source) resolve(r *resolution) {
	defer close(r.done)
	warn := func(msg string) { src.pool.opts.Warn("agent " + src.agent + ": " + msg) }
	var lists []serverTools
	for _, h := range src.servers {
		s := h.s
		st := s.state()
		<-st.ready
		if st.err != nil {
			warn(fmt.Sprintf("its tools are left out: %v", st.err))
			// Before the agent's turn goes on without them: a run hears
			// of it while it runs.
			src.pool.opts.LeftOut(LeftOutServer{Agent: src.agent, Server: s.cfg.Name, Err: st.err})
			continue
		}
		f := newFilter(s.cfg, src.allowed, src.exclude)
		st2 := serverTools{server: s.cfg.Name}
		for _, t := range s.toolList() {
			st2.raws = append(st2.raws, t.Name)
			if f.keep(s.cfg.Name, t.Name) {
				r.tools = append(r.tools, &mcpTool{s: s, raw: t.Name, def: toolDef(s.cfg.Name, t), ann: t.Annotations})
			}
		}
		lists = append(lists, st2)
		for _, w := range unmatched(s.cfg.Allowed, "mcp_servers."+s.cfg.Name+".allowed_tools", lists[len(lists)-1:]) {
			warn(w)
		}
		for _, w := range unmatched(s.cfg.Exclude, "mcp_servers."+s.cfg.Name+".exclude_tools", lists[len(lists)-1:]) {
			warn(w)
		}
	}
	if len(lists) == 0 {
		return // no server started: a filter cannot be judged
	}
	for _, w := range unmatched(src.allowed, "allowed_tools", lists) {
		warn(w)
	}
	for _, w := range unmatched(src.exclude, "exclude_tools", lists) {
		warn(w)
	}
}

func toolDef(server string, t *sdk.Tool) llm.ToolDef {
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && m != nil {
				params = m
			}
		}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return llm.ToolDef{Name: ToolName(server, t.Name), Description: desc, Parameters: params}
}

// mcpTool is one tool of a server, as an agent is offered it.
type mcpTool struct {
	s   *server
	raw string // the server's own name for it
	def llm.ToolDef
	ann *sdk.ToolAnnotations // what the server says the tool does (annotations.go)
}

func (t *mcpTool) Def() llm.ToolDef { return t.def }

// Origin is the server of an MCP tool and the server's own name for it
// (code-based tools call it by these, as upstream's wrappers do); ok is
// false for a tool that is not one of a Pool's.
func Origin(t tool.Tool) (server, raw string, ok bool) {
	m, ok := t.(*mcpTool)
	if !ok {
		return "", "", false
	}
	return m.s.cfg.Name, m.raw, true
}

func (t *mcpTool) Call(ctx context.Context, args json.RawMessage) tool.Result {
	return t.s.call(ctx, t.raw, args)
}

// call runs a tool: one retry on a fresh connection when the connection
// was lost, the circuit breaker around it, the per-call timeout.
func (s *server) call(ctx context.Context, raw string, args json.RawMessage) tool.Result {
	name := ToolName(s.cfg.Name, raw)
	if err := s.wait(ctx); err != nil {
		return tool.Errorf("%s cannot run: %v", name, err)
	}
	if err := s.breaker.allow(time.Now()); err != nil {
		return tool.Errorf("%s cannot run: MCP server %s is %v", name, s.cfg.Name, err)
	}
	timeout := s.cfg.CallTimeout
	if timeout <= 0 {
		timeout = s.opts.CallTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tok := fmt.Sprintf("massgen-%d", s.nextTok.Add(1))
	s.progress.Store(tok, func(p tool.Progress) { p.Tool = name; tool.ReportProgress(ctx, p) })
	defer s.progress.Delete(tok)

	var res *sdk.CallToolResult
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var c *conn
		if c, err = s.live(ctx); err != nil {
			break
		}
		params := &sdk.CallToolParams{Name: raw, Arguments: args}
		params.SetProgressToken(tok)
		res, err = c.session.CallTool(ctx, params)
		if err == nil || !lostConnection(err) || ctx.Err() != nil {
			break
		}
		s.retire(c) // reconnect once, then give up
	}
	switch {
	case err != nil && parent.Err() != nil:
		return tool.Errorf("%s was cancelled: %v", name, err) // the turn ended or timed out; not the server's fault
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("no result after %s: %w", timeout, err)
		s.breaker.record(time.Now(), err)
		return tool.Errorf("%s timed out: %v", name, err)
	case err != nil && strings.Contains(err.Error(), "exceeded the configured maximum line length"):
		// Not the server failing: its answer is larger than massgen reads.
		return tool.Errorf("%s failed: its result is larger than %s, the most massgen reads from an MCP server; "+
			"call it again asking for less (a narrower query, a range, a page)", name, tool.Size(MaxFrame))
	case err != nil:
		s.breaker.record(time.Now(), err)
		return tool.Errorf("%s failed: %v%s", name, err, s.stderrNote())
	}
	s.breaker.record(time.Now(), nil)
	return render(res, s.opts.ResultCap)
}

// live is the connection to use, connecting anew when there is none (a
// call found it broken, or the last reconnection failed: each call tries
// again, and the breaker stops the tries when they keep failing).
func (s *server) live(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("MCP server %s is stopped (its team was closed, or its agent's phase of the run is over)", s.cfg.Name)
	}
	if s.conn != nil {
		return s.conn, nil
	}
	rctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	c, err := s.connect(rctx)
	if err != nil {
		return nil, fmt.Errorf("reconnecting: %w", err)
	}
	s.conn = c
	return c, nil
}

// retire drops a connection found broken, unless another call already
// replaced it.
func (s *server) retire(c *conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	} else {
		c = nil
	}
	s.mu.Unlock()
	c.close()
}

// lostConnection reports whether err means the connection is gone (the
// process died, the HTTP session ended), which a new connection may cure.
func lostConnection(err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, sdk.ErrSessionMissing) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "connection closed") || strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset")
}
