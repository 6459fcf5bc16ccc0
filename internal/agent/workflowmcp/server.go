// Package workflowmcp serves massgen's workflow tools (new_answer, vote)
// over MCP to an agent that brings its own tool loop — a coding-agent CLI
// such as Claude Code or Codex, or an agent on another machine. Its calls
// become the Propose outcomes of the agent's task and the coordinator's
// verdicts their results, so such an agent takes part through the same
// agent.Agent interface as our LLM agent: Server.Run is the body of its
// Run for a coordination turn, Server.Evaluate for a post-evaluation
// (submit, restart_orchestration).
//
// The server listens on 127.0.0.1 only, over MCP's streamable HTTP, and
// every request must carry its bearer token (a per-process secret handed
// to the agent's MCP configuration). It imports the MCP SDK and the
// agent vocabulary, nothing of the orchestrator.
package workflowmcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"iter"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Server is one agent's workflow tools over MCP. One turn at a time is
// bound to it (Run); between turns a call is refused.
type Server struct {
	// Grace is how long an agent whose action was decided may take to
	// read the result and end on its own before it is stopped (default
	// DefaultGrace). An interrupted turn stops it at once.
	Grace time.Duration
	// Checklist serves submit_checklist's report gate and draft_approach
	// (checklist-gated voting), as for the LLM agent; set it before the
	// first turn.
	Checklist tool.ChecklistKit

	mcp   *mcp.Server
	token string
	ln    net.Listener
	http  *http.Server

	mu    sync.Mutex
	judge tool.Judge // the bound turn's; nil between turns
	// record takes the bound post-evaluation's verdict (Evaluate); false:
	// one was already taken. nil outside an evaluation.
	record func(agent.Evaluation) bool
	bound  uint64 // which Run bound it: a turn winding down must not unbind its successor
}

// DefaultGrace is Server.Grace's default.
const DefaultGrace = 2 * time.Second

// New returns a server with its tools and a fresh token; Listen serves it.
func New() *Server {
	var b [24]byte
	_, _ = rand.Read(b[:])
	s := &Server{token: hex.EncodeToString(b[:])}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "massgen_workflow", Title: "massgen workflow tools", Version: "1"},
		&mcp.ServerOptions{Instructions: "End your work by calling exactly one of these tools: new_answer with your complete answer, " +
			"or vote for the best existing answer. The coordinator's verdict is the result."})
	s.setTools(nil, false)
	return s
}

// Listen serves the tools on a free port of 127.0.0.1 and returns the
// endpoint's URL; every request must send "Authorization: Bearer "+Token().
func (s *Server) Listen() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	s.ln = ln
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	s.http = &http.Server{Handler: s.requireToken(h)}
	go s.http.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", nil
}

// Token is the bearer token the endpoint requires.
func (s *Server) Token() string { return s.token }

// Connect serves one session over t (stdio or in-memory transports).
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// Close stops the endpoint and its sessions.
func (s *Server) Close() error {
	var err error
	if s.http != nil {
		err = s.http.Close()
	}
	// A client that went away without ending its session (a CLI killed
	// mid-turn) leaves it open in the MCP server: close them all.
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	return err
}

// requireToken answers 401 to a request without the token (compared as
// digests, in constant time).
func (s *Server) requireToken(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(s.token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen workflow"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// setTools offers new_answer always, vote for exactly labels (none: no
// vote tool) and, for a checklist-gated task, submit_checklist once
// answers exist, as the LLM agent's turns do. Changing them tells the
// connected clients (tools/list_changed).
func (s *Server) setTools(labels []string, checklist bool) {
	s.mcp.RemoveTools(coord.ToolSubmit, coord.ToolRestart)
	s.mcp.AddTool(mcpTool(tool.NewAnswer()), s.handler(func(j tool.Judge) tool.Tool { return tool.NewAnswerTool(j) }))
	if len(labels) == 0 {
		s.mcp.RemoveTools(coord.ToolVote, coord.ToolChecklist, coord.ToolDraft)
		return
	}
	s.mcp.AddTool(mcpTool(tool.Vote(labels)), s.handler(func(j tool.Judge) tool.Tool { return tool.VoteTool(labels, j) }))
	if checklist {
		kit := s.Checklist
		s.mcp.AddTool(mcpTool(tool.GatedChecklistTool(nil, kit).Def()), s.handler(func(j tool.Judge) tool.Tool { return tool.GatedChecklistTool(j, kit) }))
		s.mcp.AddTool(mcpTool(tool.Draft()), s.handler(func(j tool.Judge) tool.Tool { return tool.DraftTool(j, kit) }))
	} else {
		s.mcp.RemoveTools(coord.ToolChecklist, coord.ToolDraft)
	}
}

func mcpTool(d llm.ToolDef) *mcp.Tool {
	return &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Parameters}
}

// handler runs a workflow tool against the bound turn's judge: the
// arguments are read and judged as the LLM agent's are.
func (s *Server) handler(make func(tool.Judge) tool.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		judge := s.judge
		s.mu.Unlock()
		if judge == nil {
			return errorResult("No coordination turn is in progress: this call was not recorded."), nil
		}
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res := tool.Invoke(ctx, make(judge), string(args), 0)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError}, nil
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// ErrNoAction is the failure of a turn whose agent ended without an
// accepted workflow action.
var ErrNoAction = errors.New("the agent ended its turn without calling new_answer or vote")

// Loop drives an agent with its own tool loop through one task: it starts
// the agent (a CLI with this server in its MCP configuration), reports
// what the agent streams through emit, and returns once the agent has
// ended. emit never blocks. A Done it emits is not passed on: its Usage,
// Steps and State become those of the Done that ends the task.
type Loop func(ctx context.Context, emit func(agent.Outcome)) error

// Run plays one coordination task of an agent with its own tool loop:
// loop drives the agent while the server's tools are bound to this task.
// Each call the agent makes becomes a Propose outcome, whose verdict from
// inbox is the call's result. Once an action is accepted (or found stale)
// the turn is over: the agent may take Grace to read the result and end,
// then loop's context is cancelled, so the agent stops, and Run ends with
// Done. A loop that returns first ends the turn as a failure (ErrNoAction
// when it returned nil).
func (s *Server) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox, loop Loop) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		proposals := make(chan agent.Propose)
		verdicts := make(chan coord.Verdict)
		labels := make([]string, len(task.Answers))
		for i, a := range task.Answers {
			labels[i] = a.Label
		}
		defer s.bind(func() { s.setTaskTools(task, labels) }, func(act coord.Action) coord.Verdict {
			select {
			case proposals <- agent.Propose{Seen: task.Epoch, Action: act}:
			case <-ctx.Done():
				return coord.Verdict{Outcome: coord.Stale, Message: "the turn is over"}
			}
			select {
			case v := <-verdicts:
				return v
			case <-ctx.Done():
				return coord.Verdict{Outcome: coord.Stale, Message: "the turn is over"}
			}
		}, nil)()

		var q queue
		q.init()
		var done agent.Done
		flush := func() bool { return q.relay(&done, yield) }
		loopDone := make(chan error, 1)
		go func() { loopDone <- loop(ctx, q.put) }()
		stop := func() { cancel(); <-loopDone }
		for {
			select {
			case <-q.ready:
				if !flush() {
					stop()
					return
				}
			case p := <-proposals:
				if !flush() || !yield(p) {
					stop()
					return
				}
				v := inbox.Verdict(ctx)
				if v.Outcome == coord.Rejected {
					if !yield(agent.Rejected{Reason: v.Message}) {
						stop()
						return
					}
				}
				select {
				case verdicts <- v:
				case <-ctx.Done():
				}
				if v.Outcome != coord.Rejected && p.Action.Kind != coord.ActChecklist && p.Action.Kind != coord.ActDraft {
					// The turn is decided (an accepted checklist is a
					// step of it, not its end): the agent reads its result and
					// ends, or is stopped after the grace.
					if s.windDown(&q, loopDone, flush, stop) {
						yield(done)
					}
					return
				}
			case err := <-loopDone:
				if !flush() {
					return
				}
				if ctx.Err() != nil && err == nil {
					err = ctx.Err()
				}
				if err == nil {
					err = ErrNoAction
				}
				done.Failure = agent.FailureOf(err, "", "", "")
				if errors.Is(err, ErrNoAction) {
					done.Failure.Kind = coord.FailProtocol
				}
				yield(done)
				return
			}
		}
	}
}

// windDown gives an agent whose task is decided Grace to read the result
// and end on its own, then stops it; false: the consumer left.
func (s *Server) windDown(q *queue, loopDone <-chan error, flush func() bool, stop func()) bool {
	grace := time.NewTimer(cmp.Or(s.Grace, DefaultGrace))
	defer grace.Stop()
	for {
		select {
		case <-q.ready:
			if !flush() {
				stop()
				return false
			}
		case <-loopDone:
			return flush()
		case <-grace.C:
			stop()
			return flush()
		}
	}
}

// bind binds the server to one task: tools sets the tools it offers, and
// judge (a coordination turn) or record (a post-evaluation) takes the
// calls; the other is nil. The returned func unbinds it, unless a later
// task has bound it since: a task winding down must not unbind its
// successor.
func (s *Server) bind(tools func(), judge tool.Judge, record func(agent.Evaluation) bool) (unbind func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tools()
	s.bound++
	mine := s.bound
	s.judge, s.record = judge, record
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.bound == mine {
			s.judge, s.record = nil, nil
		}
	}
}

// queue holds what a loop emitted until Run passes it on: put never
// blocks, so an agent's output is read at its own pace whatever the
// consumer does.
type queue struct {
	mu    sync.Mutex
	items []agent.Outcome
	ready chan struct{} // one signal per batch, made by the first put
	once  sync.Once
}

func (q *queue) init() { q.once.Do(func() { q.ready = make(chan struct{}, 1) }) }

func (q *queue) put(o agent.Outcome) {
	q.init()
	q.mu.Lock()
	q.items = append(q.items, o)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// relay passes on what the loop emitted, keeping a Done's usage, steps,
// reported cost and state in done; false: the consumer left.
func (q *queue) relay(done *agent.Done, yield func(agent.Outcome) bool) bool {
	for _, o := range q.take() {
		if d, ok := o.(agent.Done); ok {
			done.Usage, done.Steps, done.CostUSD = d.Usage, d.Steps, d.CostUSD
			if d.State != nil {
				done.State = d.State
			}
			continue
		}
		if !yield(o) {
			return false
		}
	}
	return true
}

func (q *queue) take() []agent.Outcome {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
