package workflowmcp_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/workflowmcp"
)

// evaluator is an agent with its own tool loop in a post-evaluation: it
// connects, notes the tools offered and makes its calls in order.
func evaluate(t *testing.T, srv *workflowmcp.Server, url string, calls []*mcp.CallToolParams) (agent.Done, []string, []string) {
	t.Helper()
	var offered, results []string
	var done *agent.Done
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	task := agent.Task{Kind: agent.TaskEvaluate, Question: "Capital of France?", Final: "Lyon."}
	for o := range srv.Evaluate(ctx, task, func(ctx context.Context, emit func(agent.Outcome)) error {
		sess, err := connect(ctx, url, srv.Token())
		if err != nil {
			return err
		}
		defer sess.Close()
		offered, err = toolNames(ctx, sess)
		if err != nil {
			return err
		}
		for _, c := range calls {
			res, err := sess.CallTool(ctx, c)
			if err != nil {
				return err
			}
			results = append(results, text(res))
		}
		emit(agent.Text{Text: "reviewed"})
		return nil
	}) {
		if d, ok := o.(agent.Done); ok {
			done = &d
		}
	}
	if done == nil {
		t.Fatal("no Done")
	}
	return *done, offered, results
}

// A post-evaluation offers submit and restart_orchestration, not the
// coordination tools; the first valid call is the verdict, a restart
// without its reason is sent back, and saying nothing submits.
func TestEvaluationOverMCP(t *testing.T) {
	srv := workflowmcp.New()
	srv.Grace = 100 * time.Millisecond
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	restart := &mcp.CallToolParams{Name: "restart_orchestration", Arguments: map[string]any{
		"reason": "Lyon is not the capital.", "instructions": "Name Paris."}}
	done, offered, results := evaluate(t, srv, url, []*mcp.CallToolParams{
		{Name: "restart_orchestration", Arguments: map[string]any{"instructions": "no reason given"}},
		restart,
		{Name: "submit", Arguments: map[string]any{"confirmed": true}},
	})
	slices.Sort(offered)
	if !slices.Equal(offered, []string{"restart_orchestration", "submit"}) {
		t.Errorf("offered %v", offered)
	}
	ev := done.Evaluation
	if done.Failure != nil || ev == nil || !ev.Restart || ev.Reason != "Lyon is not the capital." || ev.Instructions != "Name Paris." {
		t.Fatalf("done %+v, evaluation %+v", done, ev)
	}
	if len(results) != 3 || !strings.Contains(results[0], "needs a reason") || !strings.HasPrefix(results[1], "Restart recorded") ||
		!strings.Contains(results[2], "already recorded") {
		t.Errorf("results %q", results)
	}

	done, _, results = evaluate(t, srv, url, []*mcp.CallToolParams{{Name: "submit", Arguments: map[string]any{"confirmed": true}}})
	if ev := done.Evaluation; ev == nil || ev.Restart || len(results) != 1 || !strings.HasPrefix(results[0], "Submission recorded") {
		t.Errorf("submit: %+v %q", done.Evaluation, results)
	}
	done, _, _ = evaluate(t, srv, url, nil)
	if ev := done.Evaluation; done.Failure != nil || ev == nil || ev.Restart {
		t.Errorf("no call: %+v", done)
	}

	// Back in a coordination turn the evaluation tools are gone.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var names []string
	for range srv.Run(ctx, agent.Task{Kind: agent.TaskCoordinate}, agent.NewInbox(), func(ctx context.Context, emit func(agent.Outcome)) error {
		sess, err := connect(ctx, url, srv.Token())
		if err != nil {
			return err
		}
		defer sess.Close()
		names, err = toolNames(ctx, sess)
		if err != nil {
			return err
		}
		return nil
	}) {
	}
	if !slices.Equal(names, []string{"new_answer"}) {
		t.Errorf("coordination tools after an evaluation: %v", names)
	}
}
