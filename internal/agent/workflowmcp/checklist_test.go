package workflowmcp_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/workflowmcp"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

// gatedCLI is an agent with its own tool loop under checklist-gated voting
// with the report gate: its second turn scores without a report (refused),
// writes the report in its workspace, scores again (iterate), drafts its
// approach and answers again; later turns score with the report and vote.
type gatedCLI struct {
	srv     *workflowmcp.Server
	url, ws string
	mu      sync.Mutex
	results map[string][]string // tool → the results it read
}

type planSink struct {
	mu  sync.Mutex
	got []coord.DraftTask
}

func (p *planSink) InjectDraft(plan []coord.DraftTask) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, plan...)
	return len(plan), nil
}

func (g *gatedCLI) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	if task.Kind != agent.TaskCoordinate {
		return func(yield func(agent.Outcome) bool) { yield(agent.Done{Text: "presented"}) }
	}
	return overMCP(ctx, g.srv, g.url, task, inbox, func(ctx context.Context, sess *mcp.ClientSession) error {
		call := func(name string, args map[string]any) error {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				return err
			}
			g.mu.Lock()
			g.results[name] = append(g.results[name], text(res))
			g.mu.Unlock()
			return nil
		}
		mine, better := "", false
		for _, a := range task.Answers {
			if strings.HasPrefix(a.Content, "cli") {
				mine, better = a.Label, a.Content == "cli second, deeper"
			}
		}
		if mine == "" {
			return call("new_answer", map[string]any{"content": "cli first"})
		}
		scores := map[string]any{}
		for _, a := range task.Answers {
			s := 5
			if a.Label == mine && better {
				s = 10
			}
			scores[a.Label] = map[string]any{"E1": s, "E2": s, "E3": s, "E4": s}
		}
		if !better {
			if err := call("submit_checklist", map[string]any{"scores": scores}); err != nil {
				return err
			}
			report := strings.Repeat("E1-E4: every answer leaves part two as a placeholder. ", 3)
			if err := os.MkdirAll(filepath.Join(g.ws, "tasks"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(g.ws, "tasks", "diagnostic_report.md"), []byte(report), 0o644); err != nil {
				return err
			}
		}
		if err := call("submit_checklist", map[string]any{"scores": scores, "report_path": "tasks/diagnostic_report.md"}); err != nil {
			return err
		}
		if better {
			return call("vote", map[string]any{"agent_id": mine, "reason": "it passes"})
		}
		imp := map[string]any{}
		for _, e := range []string{"E1", "E2", "E3", "E4"} {
			imp[e] = []any{map[string]any{"plan": "deepen part two for " + e, "sources": []any{"fresh"}, "impact": "structural"}}
		}
		if err := call("draft_approach", map[string]any{"improvements": imp, "vision": "every part deep"}); err != nil {
			return err
		}
		return call("new_answer", map[string]any{"content": "cli second, deeper"})
	})
}

// A CLI agent (its own tool loop) gets the report gate and draft_approach
// over MCP, as the LLM agent does: a checklist without its report is
// refused, the report it writes in its workspace is read through its
// Guard, and its draft is laid in its task plan.
func TestACLIAgentGetsTheReportGateAndDraftApproachOverMCP(t *testing.T) {
	ws := t.TempDir()
	g, err := workspace.New(workspace.Policy{Agent: "cli", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	sink := &planSink{}
	srv := workflowmcp.New()
	srv.Checklist = tool.ChecklistKit{Files: g, Plan: sink}
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli := &gatedCLI{srv: srv, url: url, ws: ws, results: map[string][]string{}}
	res := runTeam(t, cli, []string{"b", "c"}, "q",
		orchestrator.Options{Settings: coord.Settings{Checklist: &coord.Checklist{Agents: []string{"cli"}, Report: true}}})
	if res.Status != orchestrator.Completed {
		t.Fatalf("status %s (%v)", res.Status, res.Err)
	}
	cli.mu.Lock()
	defer cli.mu.Unlock()
	checks, drafts := cli.results["submit_checklist"], cli.results["draft_approach"]
	if len(checks) < 3 || !strings.Contains(checks[0], `"error_code":"diagnostic_report_invalid"`) ||
		!strings.Contains(checks[1], `"verdict":"new_answer"`) || !strings.Contains(checks[1], "Diagnostic report provided") {
		t.Fatalf("checklist results: %q", checks)
	}
	if len(drafts) != 1 || !strings.Contains(drafts[0], "pre-populated with 5 items") {
		t.Errorf("draft results: %q", drafts)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.got) != 5 || sink.got[0].Type != "vision" || sink.got[1].CriterionID != "E1" {
		t.Errorf("tasks laid: %+v", sink.got)
	}
}
