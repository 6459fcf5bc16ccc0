package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os/exec"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/workflowmcp"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/tool"
)

// Agent is a coding-agent CLI as a team member (an agent.Agent). Each task
// runs the CLI once, as a child process in the agent's workspace; a
// coordination turn serves it the workflow tools over MCP and ends when
// the coordinator has its action; a post-evaluation serves it submit and
// restart_orchestration and ends with its verdict.
type Agent struct {
	ID     string
	Vendor Vendor
	// Path is the CLI's executable.
	Path string
	// Model, BaseURL and APIKey: see Invocation.
	Model, BaseURL, APIKey string
	// Workdir is the agent's workspace; Home the CLI's private home.
	Workdir, Home string
	// MCPServers are the agent's own MCP servers, handed to the CLI.
	MCPServers []MCPServer
	// Options are the backend block's keys (see Invocation.Options).
	Options map[string]any
	// Env is the CLI's base environment (KEY=VALUE); nil: BaseEnv.
	Env []string
	// Wrap, when set, makes cmd run in the agent's sandbox with env as its
	// whole environment (sandbox.Program). Without it the CLI runs as a
	// plain child process: only for tests and explicit consent.
	Wrap func(cmd *exec.Cmd, env []string)
	// Network, when set, gives each task's CLI a network of its own in
	// place of Wrap: given the task's endpoints (its provider's base URL
	// with the key, the workflow server's URL, the URLs of its MCP
	// servers), it returns the routes the CLI uses in their place and the
	// wrap that runs it in its sandbox behind them (network.go).
	Network func(eps []Endpoint) (Isolation, error)
	// Tools are the agent's own massgen tools (its custom tools): the CLI
	// gets them over MCP, from the server ToolsServer, in every task.
	Tools []tool.Tool
	// Checklist serves the report gate and draft_approach of
	// checklist-gated voting through the workflow server.
	Checklist tool.ChecklistKit

	mu       sync.Mutex
	wf       *workflowmcp.Server
	url      string
	tools    *workflowmcp.Server
	toolsURL string
	task     *binding // the task in progress, as its tools see it (round.go)
}

// ToolsServer is the name of the MCP server of an agent's own massgen
// tools in its CLI's configuration (mcp__massgen_tools__<tool>).
const ToolsServer = "massgen_tools"

// state is what the agent keeps between tasks (agent.Task.State).
type state struct {
	Session string `json:"session,omitempty"`
}

// Run plays one task; see agent.Agent.
func (a *Agent) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	inv := a.invocation(task)
	if len(a.Tools) > 0 {
		srv, url, err := a.toolServer()
		if err != nil {
			return failed(a.failure(fmt.Errorf("cannot serve the agent's tools: %w", err)))
		}
		inv.MCPServers = append(inv.MCPServers[:len(inv.MCPServers):len(inv.MCPServers)],
			MCPServer{Name: ToolsServer, URL: url, Headers: map[string]string{"Authorization": "Bearer " + srv.Token()}})
	}
	if task.Kind == agent.TaskCoordinate || task.Kind == agent.TaskEvaluate {
		// The workflow tools end these tasks: new_answer and vote a
		// coordination turn, submit and restart_orchestration a
		// post-evaluation.
		srv, err := a.workflow()
		if err != nil {
			return failed(a.failure(fmt.Errorf("cannot serve the workflow tools: %w", err)))
		}
		inv.Workflow = &MCPServer{Name: WorkflowServer, URL: a.url, Headers: map[string]string{"Authorization": "Bearer " + srv.Token()}}
		loop := func(ctx context.Context, emit func(agent.Outcome)) error {
			res, err := a.playCoordination(ctx, inv, inbox, emit) // round.go
			emit(agent.Done{Usage: res.Usage, CostUSD: res.CostUSD, State: a.state(res)})
			return err
		}
		if task.Kind == agent.TaskEvaluate {
			return a.named(srv.Evaluate(ctx, task, loop))
		}
		return a.named(srv.Run(ctx, task, inbox, loop))
	}
	return func(yield func(agent.Outcome) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var text strings.Builder
		open := true
		_, unbind := a.bindTask(ctx)
		defer unbind()
		res, err := a.exec(ctx, inv, func(o agent.Outcome) {
			if t, ok := o.(agent.Text); ok {
				text.WriteString(t.Text)
			}
			if open && !yield(o) {
				open = false
				cancel()
			}
		})
		if !open {
			return
		}
		done := agent.Done{Usage: res.Usage, CostUSD: res.CostUSD, State: a.state(res), Text: strings.TrimSpace(res.Text)}
		if done.Text == "" {
			done.Text = strings.TrimSpace(text.String())
		}
		if err != nil {
			done.Failure = a.failure(err)
		}
		yield(done)
	}
}

// invocation lays out a task for the vendor.
func (a *Agent) invocation(task agent.Task) *Invocation {
	var st state
	_ = json.Unmarshal(task.State, &st)
	return &Invocation{Task: task, Workdir: a.Workdir, Home: a.Home, Model: a.Model, BaseURL: a.BaseURL, APIKey: a.APIKey,
		Session: st.Session, System: task.System, Prompt: task.User, MCPServers: a.MCPServers, Options: a.Options,
		Sandboxed: a.Wrap != nil || a.Network != nil}
}

func (a *Agent) state(res Result) []byte {
	if res.Session == "" {
		return nil
	}
	b, _ := json.Marshal(state{Session: res.Session})
	return b
}

// toolServer starts the server of the agent's own tools on first use.
func (a *Agent) toolServer() (*workflowmcp.Server, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tools == nil {
		srv := workflowmcp.NewTools(a.boundTools()) // round.go
		url, err := srv.Listen()
		if err != nil {
			return nil, "", err
		}
		a.tools, a.toolsURL = srv, url
	}
	return a.tools, a.toolsURL, nil
}

// workflow starts the agent's workflow server on first use.
func (a *Agent) workflow() (*workflowmcp.Server, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wf != nil {
		return a.wf, nil
	}
	srv := workflowmcp.New()
	srv.Checklist = a.Checklist
	url, err := srv.Listen()
	if err != nil {
		return nil, err
	}
	a.wf, a.url = srv, url
	return srv, nil
}

// Close stops the agent's MCP servers (workflow tools, its own tools).
func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if a.wf != nil {
		err = a.wf.Close()
		a.wf = nil
	}
	if a.tools != nil {
		err = errors.Join(err, a.tools.Close())
		a.tools = nil
	}
	return err
}

// failure names the agent and its CLI in a task's failure.
func (a *Agent) failure(err error) *coord.Failure {
	f := agent.FailureOf(err, a.ID, a.Vendor.Type(), a.Model)
	var pe *ProcessError
	if errors.As(err, &pe) && f.Kind == coord.FailOther {
		f.Kind = coord.FailProvider
	}
	return f
}

// named fills in the agent, its CLI and its model where a task's failure
// does not say them (the workflow server knows none of them), so that
// every failure names who failed.
func (a *Agent) named(seq iter.Seq[agent.Outcome]) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		for o := range seq {
			if d, ok := o.(agent.Done); ok && d.Failure != nil {
				f := *d.Failure
				f.Agent, f.Provider, f.Model = cmp.Or(f.Agent, a.ID), cmp.Or(f.Provider, a.Vendor.Type()), cmp.Or(f.Model, a.Model)
				d.Failure = &f
				o = d
			}
			if !yield(o) {
				return
			}
		}
	}
}

func failed(f *coord.Failure) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) { yield(agent.Done{Failure: f}) }
}
