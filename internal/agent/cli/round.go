package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// A CLI agent's own massgen tools (Agent.Tools: custom tools, task
// planning, subagents) are served to its CLI over MCP (ToolsServer), so
// their calls arrive as HTTP requests, not from a tool loop of ours. Each
// call is bound to the task in progress (binding): it runs in the task's
// context, so a subagent's spend is charged to the task's run
// (tool.ChargeOf) and a task that ends stops its calls, and the task's
// round-time messages ride on its results.
//
// Round timeouts (coord.WrapUp, posted to the task's inbox) reach the CLI
// mid-turn in two ways, as upstream's hooks do and where upstream falls
// short:
//   - the soft limit's wrap-up message is appended to the result of the
//     CLI's next call of one of these tools, as upstream's post-tool hook
//     appends it (upstream reaches a CLI's native tools through its hooks;
//     massgen has no hook into them);
//   - the hard limit ends the CLI at once, whatever it is doing (upstream
//     acts only when the CLI next calls a tool, so a CLI that streams text
//     or runs a long command goes on until the run's timeout), and starts
//     it again, fresh, with the task's prompt followed by the undelivered
//     messages and the hard limit's, with only the workflow tools: its own
//     massgen tools and MCP servers are not handed to it, the vendor takes
//     the CLI's native tools away where the CLI allows it
//     (Invocation.WorkflowOnly), and a call of a massgen tool still in
//     flight is refused as the LLM agent's are. What the first process
//     wrote is in the workspace; a fresh process, not a resumed session,
//     because every task is self-contained (the vendors start each task
//     fresh, see their package docs).

// binding is the task in progress as the agent's own tools see it.
type binding struct {
	ctx        context.Context // the task's: its charge function, its end
	mu         sync.Mutex
	notes      []string // round-time messages not yet delivered
	restricted atomic.Bool
}

func (b *binding) note(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes = append(b.notes, msg)
}

// takeNotes returns the messages not yet delivered, and forgets them.
func (b *binding) takeNotes() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.Join(b.notes, "\n\n")
	b.notes = nil
	return s
}

// bindTask binds the agent's tools to a task played in ctx until the
// returned func is called.
func (a *Agent) bindTask(ctx context.Context) (*binding, func()) {
	b := &binding{ctx: ctx}
	a.mu.Lock()
	a.task = b
	a.mu.Unlock()
	return b, func() {
		a.mu.Lock()
		if a.task == b {
			a.task = nil
		}
		a.mu.Unlock()
	}
}

func (a *Agent) bound() *binding {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.task
}

// boundTools are the agent's tools as its CLI is served them: each call
// bound to the task in progress.
func (a *Agent) boundTools() []tool.Tool {
	out := make([]tool.Tool, len(a.Tools))
	for i, t := range a.Tools {
		out[i] = boundTool{a: a, t: t}
	}
	return out
}

type boundTool struct {
	a *Agent
	t tool.Tool
}

func (b boundTool) Def() llm.ToolDef { return b.t.Def() }

func (b boundTool) Call(ctx context.Context, args json.RawMessage) tool.Result {
	bd := b.a.bound()
	if bd == nil {
		// Between tasks: only a CLI that outlived its task calls now, and
		// nothing it starts could be charged or stopped with a task.
		return tool.Errorf("No task of this agent is in progress: the call of %q was not run.", b.t.Def().Name)
	}
	if bd.restricted.Load() {
		return tool.Errorf("HARD ROUND TIMEOUT: tool %q is blocked; only vote or new_answer are allowed now. Call one of them.", b.t.Def().Name)
	}
	// The task's context, ended also when the CLI's request ends.
	cctx, cancel := context.WithCancel(bd.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	res := b.t.Call(cctx, args)
	if n := bd.takeNotes(); n != "" {
		res.Content += "\n\n" + n
	}
	return res
}

// playCoordination runs the CLI through a coordination task, watching
// inbox for round-time messages: a soft one waits for the next call of
// the agent's tools, a hard one restarts the CLI with workflow tools only
// (see above). The result sums every process it ran.
func (a *Agent) playCoordination(ctx context.Context, inv *Invocation, inbox *agent.Inbox, emit func(agent.Outcome)) (Result, error) {
	bd, unbind := a.bindTask(ctx)
	defer unbind()
	var total Result
	for {
		pctx, cancel := context.WithCancel(ctx)
		var hard atomic.Bool
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				select {
				case <-inbox.WrapUpPosted():
					for _, w := range inbox.TakeWrapUps() {
						bd.note(w.Message)
						if w.Hard && !bd.restricted.Swap(true) {
							hard.Store(true)
							cancel()
						}
					}
				case <-pctx.Done():
					return
				}
			}
		}()
		res, err := a.exec(pctx, inv, emit)
		cancel()
		<-watched
		total.Usage.Add(res.Usage)
		total.CostUSD += res.CostUSD
		total.Session, total.Text = res.Session, res.Text
		if hard.Load() && ctx.Err() == nil {
			inv = workflowOnly(inv, bd.takeNotes())
			continue
		}
		return total, err
	}
}

// workflowOnly is inv after the hard round timeout: the task's prompt
// followed by the round-time messages, the workflow server the only MCP
// server.
func workflowOnly(inv *Invocation, notes string) *Invocation {
	next := *inv
	next.Prompt = strings.TrimSpace(inv.Prompt + "\n\n" + notes)
	next.MCPServers = nil
	next.WorkflowOnly = true
	next.Session = ""
	return &next
}
