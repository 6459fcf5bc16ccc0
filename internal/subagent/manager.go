package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Settings are orchestrator.coordination's subagent keys, with upstream's
// defaults for what is left zero (WithDefaults).
type Settings struct {
	// DefaultTimeout is each child's time (subagent_default_timeout, 300 s),
	// clamped to [MinTimeout, MaxTimeout] (60 s, 600 s).
	DefaultTimeout, MinTimeout, MaxTimeout time.Duration
	// MaxConcurrent is both the most tasks one spawn_subagents call may
	// ask for (upstream's meaning of subagent_max_concurrent) and the most
	// children of one agent at work at once; the others wait their turn.
	MaxConcurrent int
	// Types are the specialised types the agent may ask for.
	Types []Type
}

// WithDefaults fills the zero fields with upstream's defaults.
func (s Settings) WithDefaults() Settings {
	s.DefaultTimeout = cmp.Or(s.DefaultTimeout, 300*time.Second)
	s.MinTimeout = cmp.Or(s.MinTimeout, 60*time.Second)
	s.MaxTimeout = cmp.Or(s.MaxTimeout, 600*time.Second)
	s.MaxConcurrent = cmp.Or(s.MaxConcurrent, 3)
	return s
}

// clamp bounds a child's time.
func (s Settings) clamp(d time.Duration) time.Duration {
	return min(max(d, s.MinTimeout), max(s.MaxTimeout, s.MinTimeout))
}

// Spec is one child run to make.
type Spec struct {
	ID   string
	Task string // the child's question, with the parent's CONTEXT.md and any earlier exchange
	// System is the child's system message (a type's prompt), or "".
	System string
	// Dir is the child's own directory, <parent workspace>/subagents/<id>:
	// the child's workspaces and files are made under it.
	Dir string
	// LogDir is where the child's logs go ("" for none).
	LogDir string
	// ReadOnly are the paths the child may read and never write: the
	// parent's workspace, its view of the others' work, context paths.
	ReadOnly []string
	// Refine lets the child's team refine and vote over rounds; false
	// takes its first answer.
	Refine  bool
	Timeout time.Duration
	// Inbox brings the parent's runtime messages to the child's agents.
	Inbox *Inbox
}

// Report is what a child run produced.
type Report struct {
	Answer string
	// Workspace is where the child's files are (its winner's workspace),
	// or "" when it made none.
	Workspace string
	LogDir    string
	Usage     llm.Usage
	CostUSD   float64
	// TimedOut says the child's deadline cut it short (its answer, when
	// there is one, is the best it had).
	TimedOut bool
	Err      error
}

// Runner makes child runs. It must return once ctx is done, with what the
// child spent until then.
type Runner interface {
	Run(ctx context.Context, s Spec) Report
}

// RunnerFunc is a function as a Runner.
type RunnerFunc func(ctx context.Context, s Spec) Report

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, s Spec) Report { return f(ctx, s) }

// Parent is the agent a Manager works for.
type Parent struct {
	Agent     string
	Workspace string // its workspace: CONTEXT.md, and the children's directories under subagents/
	// View is its read-only view of the others' work (temp workspaces),
	// shared with children unless a task opts out ("" for none).
	View string
	// LogDir, when set, tells the parent run's log directory ("" none);
	// called as a child starts, since the logs open after the team.
	LogDir func() string
	// CanRead checks that the parent may read p itself: a child is given
	// no path its parent could not read (context_paths, context_files).
	// It returns the path resolved.
	CanRead func(p string) (string, error)
}

// Child states, as upstream names them.
const (
	StatusRunning             = "running"
	StatusCompleted           = "completed"
	StatusCompletedButTimeout = "completed_but_timeout"
	StatusTimeout             = "timeout"
	StatusError               = "error"
	StatusCancelled           = "cancelled"
)

// Manager is one agent's children in one run.
type Manager struct {
	set    Settings
	parent Parent
	runner Runner
	ctx    context.Context // the run's: background children live as long
	stop   context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	children map[string]*child
	order    []string
	next     int
	closed   bool
	// leftover is what children spent that no run could be charged with
	// any more (the parent's run had ended); Close returns it.
	leftover     llm.Usage
	leftoverCost float64
	// notices are background children's results the parent has not been
	// told of yet (Notify).
	notices []string
}

// child is one subagent, across its runs (continue_subagent).
type child struct {
	id, task, typ string
	system        string
	dir           string
	readOnly      []string
	refine        bool
	status        string
	background    bool
	started       time.Time
	ended         time.Time
	timeout       time.Duration
	cancel        context.CancelCauseFunc
	unwatch       func() bool // stops following the blocking call's context
	done          chan struct{}
	inbox         *Inbox
	report        Report
	history       []exchange
	usage         llm.Usage // all its runs
	cost          float64
}

type exchange struct{ ask, answer string }

// errCancelled is the cause a child is cancelled with by cancel_subagent.
var errCancelled = errors.New("cancelled by its parent (cancel_subagent)")

// New returns the manager of parent's children in the run ctx belongs to:
// they end when ctx does, or at Close.
func New(ctx context.Context, s Settings, parent Parent, r Runner) *Manager {
	s = s.WithDefaults()
	ctx, stop := context.WithCancel(ctx)
	return &Manager{set: s, parent: parent, runner: r, ctx: ctx, stop: stop,
		slots: make(chan struct{}, s.MaxConcurrent), children: map[string]*child{}}
}

// Close cancels the children still at work, waits for them, and returns
// what they spent that could not be charged to the run any more: the
// caller adds it to the run's totals.
func (m *Manager) Close() (llm.Usage, float64) {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.stop()
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leftover, m.leftoverCost
}

// Task is one entry of spawn_subagents' tasks.
type Task struct {
	Task                   string   `json:"task"`
	ID                     string   `json:"subagent_id,omitempty"`
	Type                   string   `json:"subagent_type,omitempty"`
	ContextPaths           []string `json:"context_paths,omitempty"`
	IncludeParentWorkspace *bool    `json:"include_parent_workspace,omitempty"`
	IncludeTempWorkspace   *bool    `json:"include_temp_workspace,omitempty"`
	ContextFiles           []string `json:"context_files,omitempty"`
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// prepare checks the tasks of one spawn and makes each child, not yet
// started. Nothing is made when any task is refused.
func (m *Manager) prepare(tasks []Task, shared []string, refine bool) ([]*child, error) {
	if len(tasks) == 0 {
		return nil, errors.New("No tasks provided. Must provide at least one task.")
	}
	if len(tasks) > m.set.MaxConcurrent {
		return nil, fmt.Errorf("Too many tasks: %d requested but maximum is %d. Please reduce to %d or fewer tasks per spawn_subagents call.",
			len(tasks), m.set.MaxConcurrent, m.set.MaxConcurrent)
	}
	ctxMD, err := os.ReadFile(filepath.Join(m.parent.Workspace, "CONTEXT.md"))
	if err != nil || strings.TrimSpace(string(ctxMD)) == "" {
		return nil, errors.New("CONTEXT.md not found in workspace. Before spawning subagents, create a CONTEXT.md file with task context " +
			"(write_file CONTEXT.md describing the project and its goal).")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the run is over: no subagent can start")
	}
	var out []*child
	taken := map[string]bool{}
	for i, t := range tasks {
		if strings.TrimSpace(t.Task) == "" {
			return nil, fmt.Errorf("Task at index %d missing required 'task' field", i)
		}
		id := t.ID
		if id == "" {
			for {
				m.next++
				id = fmt.Sprintf("subagent_%d", m.next)
				if m.children[id] == nil && !taken[id] {
					break
				}
			}
		}
		if !idPattern().MatchString(id) || strings.Contains(id, "..") {
			return nil, fmt.Errorf("Task at index %d: subagent_id %q is not a valid name (letters, digits, '_', '-', '.'; at most 64)", i, id)
		}
		if m.children[id] != nil || taken[id] {
			return nil, fmt.Errorf("Task at index %d: subagent_id %q is already used; give each subagent its own id (e.g. %s_2)", i, id, id)
		}
		taken[id] = true
		c := &child{id: id, task: t.Task, refine: refine, timeout: m.set.clamp(m.set.DefaultTimeout),
			dir: filepath.Join(m.parent.Workspace, "subagents", id)}
		if t.Type != "" {
			typ, ok := Find(m.set.Types, t.Type)
			if !ok {
				return nil, fmt.Errorf("Task at index %d: unknown subagent_type %q; available: %s", i, t.Type, typeNames(m.set.Types))
			}
			c.typ, c.system = typ.Name, typ.Prompt
		}
		if t.IncludeParentWorkspace == nil || *t.IncludeParentWorkspace {
			c.readOnly = append(c.readOnly, m.parent.Workspace)
		}
		if m.parent.View != "" && (t.IncludeTempWorkspace == nil || *t.IncludeTempWorkspace) {
			c.readOnly = append(c.readOnly, m.parent.View)
		}
		for _, p := range append(append([]string(nil), shared...), append(t.ContextPaths, t.ContextFiles...)...) {
			real, err := m.readable(p)
			if err != nil {
				return nil, fmt.Errorf("Task at index %d: %v", i, err)
			}
			if !containsPath(c.readOnly, real) {
				c.readOnly = append(c.readOnly, real)
			}
		}
		c.task = withContext(string(ctxMD), t.Task)
		out = append(out, c)
	}
	return out, nil
}

// readable resolves a path the model gave (relative to the parent's
// workspace) and checks that the parent itself may read it.
func (m *Manager) readable(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.parent.Workspace, p)
	}
	if m.parent.CanRead == nil {
		return "", fmt.Errorf("%s cannot be shared with a subagent", p)
	}
	real, err := m.parent.CanRead(p)
	if err != nil {
		return "", fmt.Errorf("%s cannot be shared with a subagent: %v", p, err)
	}
	return real, nil
}

func containsPath(list []string, p string) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

func typeNames(types []Type) string {
	if len(types) == 0 {
		return "none"
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// withContext is a child's question: the parent's CONTEXT.md, then the
// task (upstream puts CONTEXT.md in the child's prompt).
func withContext(ctxMD, task string) string {
	return "Context of the work you are helping with (from CONTEXT.md):\n" + strings.TrimSpace(ctxMD) + "\n\nYour task:\n" + task
}

// start registers c and runs it in its own goroutine under the run's
// context; a blocking caller also stops it when call ends. charge is the
// spawning call's, through which what it spent reaches the parent's run.
func (m *Manager) start(call context.Context, c *child, background bool, charge tool.ChargeFunc) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errors.New("the run is over: no subagent can start")
	}
	if _, ok := m.children[c.id]; !ok {
		m.order = append(m.order, c.id)
	}
	m.children[c.id] = c
	ctx, cancel := context.WithCancelCause(m.ctx)
	c.status, c.background, c.started, c.ended = StatusRunning, background, time.Now(), time.Time{}
	c.cancel, c.done, c.inbox = cancel, make(chan struct{}), NewInbox()
	m.wg.Add(1)
	m.mu.Unlock()
	c.unwatch = func() bool { return false }
	if !background {
		// A blocking child belongs to the turn that waits for it.
		c.unwatch = context.AfterFunc(call, func() { cancel(context.Cause(call)) })
	}
	go func() {
		defer cancel(nil)
		m.run(ctx, c, charge)
	}()
	return nil
}

// run plays one run of c: it waits for a slot, runs the child, records
// the result and charges its spend.
func (m *Manager) run(ctx context.Context, c *child, charge tool.ChargeFunc) {
	defer m.wg.Done()
	defer close(c.done)
	defer c.unwatch()
	var rep Report
	select {
	case m.slots <- struct{}{}:
		tctx, stop := context.WithTimeout(ctx, c.timeout+grace(c.timeout))
		logDir := ""
		if m.parent.LogDir != nil {
			if d := m.parent.LogDir(); d != "" {
				logDir = filepath.Join(d, "subagents", c.id)
			}
		}
		rep = m.runner.Run(tctx, Spec{ID: c.id, Task: c.prompt(), System: c.system, Dir: c.dir, LogDir: logDir,
			ReadOnly: c.readOnly, Refine: c.refine, Timeout: c.timeout, Inbox: c.inbox})
		if errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			rep.TimedOut = true
		}
		stop()
		<-m.slots
	case <-ctx.Done():
		rep.Err = context.Cause(ctx)
	}
	status := StatusCompleted
	switch {
	case errors.Is(context.Cause(ctx), errCancelled):
		status = StatusCancelled
	case rep.TimedOut && rep.Answer != "":
		status = StatusCompletedButTimeout
	case rep.TimedOut:
		status = StatusTimeout
	case rep.Err != nil || ctx.Err() != nil || rep.Answer == "":
		status = StatusError
		if rep.Err == nil {
			rep.Err = cmp.Or(context.Cause(ctx), errors.New("the subagent gave no answer"))
		}
	}
	charged := charge != nil && charge(rep.Usage, rep.CostUSD)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !charged {
		m.leftover.Add(rep.Usage)
		m.leftoverCost += rep.CostUSD
	}
	c.status, c.report, c.ended = status, rep, time.Now()
	c.usage.Add(rep.Usage)
	c.cost += rep.CostUSD
	c.history = append(c.history, exchange{ask: c.task, answer: rep.Answer})
	if c.background && !m.closed {
		m.notices = append(m.notices, fmt.Sprintf("Background subagent %s finished (%s). Its answer:\n%s\nIts files: %s",
			c.id, status, cmp.Or(cut(rep.Answer, 4000), "(none)"), cmp.Or(rep.Workspace, c.dir)))
	}
}

// grace is how long past its own deadline a child may take to present
// what it has before it is stopped.
func grace(d time.Duration) time.Duration { return max(30*time.Second, d/5) }

// prompt is what the child is asked this run: the task, or on a
// continue_subagent the earlier exchanges then the new message.
func (c *child) prompt() string {
	if len(c.history) == 0 {
		return c.task
	}
	var b strings.Builder
	b.WriteString("You worked on this before.\n")
	for i, h := range c.history {
		fmt.Fprintf(&b, "\n--- Request %d ---\n%s\n--- Your answer %d ---\n%s\n", i+1, h.ask, i+1, cmp.Or(h.answer, "(none: the run ended without one)"))
	}
	b.WriteString("\n--- New message ---\n" + c.task)
	return b.String()
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[... cut; the whole answer is in list_subagents]"
}

// Notify returns the background results the parent has not been told of
// yet, once each.
func (m *Manager) Notify() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.notices) == 0 {
		return ""
	}
	s := strings.Join(m.notices, "\n\n")
	m.notices = nil
	return s
}

// WithNotices wraps a tool of the parent so that its results also carry
// the background children's results as they finish (upstream injects
// them into the parent's context).
func (m *Manager) WithNotices(t tool.Tool) tool.Tool {
	return appendTo(t, func() string {
		if s := m.Notify(); s != "" {
			return "\n\n[Subagent update]\n" + s
		}
		return ""
	})
}

// wait waits for the children to end, or ctx.
func wait(ctx context.Context, cs []*child) {
	for _, c := range cs {
		select {
		case <-c.done:
		case <-ctx.Done():
			return
		}
	}
}

// Children lists the ids of the children, in order of first spawn.
func (m *Manager) Children() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.order...)
}

// Spent is what the children spent in all, charged or not.
func (m *Manager) Spent() (llm.Usage, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var u llm.Usage
	var c float64
	for _, ch := range m.children {
		u.Add(ch.usage)
		c += ch.cost
	}
	return u, c
}
