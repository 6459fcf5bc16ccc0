package workflowmcp_test

import (
	"context"
	"iter"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/workflowmcp"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
)

// decomposer is an agent with its own tool loop in decomposition mode: it
// shares its part with new_answer, and once its part is among the work
// shown, calls stop.
type decomposer struct {
	srv     *workflowmcp.Server
	url     string
	mu      sync.Mutex
	offered [][]string
	results []string
}

func (d *decomposer) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	if task.Kind != agent.TaskCoordinate {
		return presents("merged")
	}
	return overMCP(ctx, d.srv, d.url, task, inbox, func(ctx context.Context, sess *mcp.ClientSession) error {
		names, err := toolNames(ctx, sess)
		if err != nil {
			return err
		}
		call := &mcp.CallToolParams{Name: "new_answer", Arguments: map[string]any{"content": "the parser, in parse.py"}}
		if slices.ContainsFunc(task.Answers, func(a coord.Answer) bool { return a.Content == "the parser, in parse.py" }) {
			call = &mcp.CallToolParams{Name: "stop", Arguments: map[string]any{"summary": "parser done", "status": "complete"}}
		}
		res, err := sess.CallTool(ctx, call)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.offered = append(d.offered, names)
		d.results = append(d.results, text(res))
		d.mu.Unlock()
		return nil
	})
}

// A CLI agent gets decomposition mode's tools over MCP: new_answer and
// stop, never vote; its stop is counted, and the run ends with the last
// agent presenting.
func TestACLIAgentStopsOverMCP(t *testing.T) {
	srv := workflowmcp.New()
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d := &decomposer{srv: srv, url: url}
	b := event.NewBroker()
	sub := b.Subscribe()
	stops := make(chan []string, 1)
	go func() {
		var reasons []string
		for {
			e, ok := sub.Next(nil)
			if !ok {
				stops <- reasons
				return
			}
			if v, ok := e.(event.VoteAccepted); ok && v.Agent == "cli" && v.Target == "cli" {
				reasons = append(reasons, v.Reason)
			}
		}
	}()
	res := runTeam(t, d, []string{"b"}, "Build a calculator", orchestrator.Options{Events: b,
		Settings: coord.Settings{Decomposition: true}, Subtasks: &orchestrator.Subtasks{Given: map[string]string{"cli": "the parser", "b": "the evaluator"}}})
	if res.Status != orchestrator.Completed || res.Winner != "b" {
		t.Fatalf("status %s, winner %q (%v)", res.Status, res.Winner, res.Err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, names := range d.offered {
		if !slices.Contains(names, "new_answer") || !slices.Contains(names, "stop") || slices.Contains(names, "vote") {
			t.Errorf("tools offered: %v, want new_answer and stop", names)
		}
	}
	// The stop is counted (published as a vote for its own work). The
	// agent may not read its result: the last stop ends coordination, and
	// its turn with it, as the reply is on its way.
	if reasons := <-stops; !slices.Contains(reasons, "stop (complete): parser done") {
		t.Errorf("the CLI agent's stops: %q (results it read: %q)", reasons, d.results)
	}
}
