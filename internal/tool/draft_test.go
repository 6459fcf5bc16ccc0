package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// guardIn is a Guard for a workspace ws with the others' snapshots in
// snap (read-only) and the rest of root outside what the agent was given.
func guardIn(t *testing.T) (g *workspace.Guard, root, ws, snap string) {
	t.Helper()
	root = t.TempDir()
	ws, snap = filepath.Join(root, "ws"), filepath.Join(root, "snap")
	for _, d := range []string{ws, snap, filepath.Join(ws, "tasks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: ws, ReadOnly: []string{snap}})
	if err != nil {
		t.Fatal(err)
	}
	return g, root, ws, snap
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The report is read through the agent's Guard, and only a file of its
// own workspace counts: another agent's snapshot (readable), a file
// outside everything it was given, a link out of the workspace are all
// problems; reading changes nothing on disk.
func TestReadReportReadsOnlyTheAgentsOwnWorkspace(t *testing.T) {
	g, root, ws, snap := guardIn(t)
	report := strings.Repeat("E1: the answer misses the second requirement. ", 4)
	if got := tool.ReadReport(g, ""); got != (coord.ReportFacts{}) {
		t.Errorf("no report and none at the default path: %+v", got)
	}
	write(t, filepath.Join(ws, coord.DefaultReportPath), "  "+report+"\n")
	write(t, filepath.Join(ws, "mine.md"), "short")
	write(t, filepath.Join(snap, "theirs.md"), report)
	write(t, filepath.Join(root, "outside.md"), report)
	if err := os.Symlink(filepath.Join(root, "outside.md"), filepath.Join(ws, "link.md")); err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, root)
	n := len([]rune(strings.TrimSpace(report)))
	for _, tc := range []struct {
		given   string
		want    coord.ReportFacts
		problem string
	}{
		{"", coord.ReportFacts{Path: coord.DefaultReportPath, Chars: n}, ""},
		{coord.DefaultReportPath, coord.ReportFacts{Path: coord.DefaultReportPath, Chars: n}, ""},
		{filepath.Join(ws, "mine.md"), coord.ReportFacts{Path: filepath.Join(ws, "mine.md"), Chars: 5}, ""},
		{"missing.md", coord.ReportFacts{Path: "missing.md"}, "not found"},
		{filepath.Join(snap, "theirs.md"), coord.ReportFacts{Path: filepath.Join(snap, "theirs.md")}, "inside your workspace"},
		{filepath.Join(root, "outside.md"), coord.ReportFacts{Path: filepath.Join(root, "outside.md")}, "unreadable"},
		{"../outside.md", coord.ReportFacts{Path: "../outside.md"}, "unreadable"},
		{"link.md", coord.ReportFacts{Path: "link.md"}, "unreadable"},
	} {
		got := tool.ReadReport(g, tc.given)
		if tc.problem == "" && got != tc.want || tc.problem != "" && (got.Path != tc.want.Path || got.Chars != 0 || !strings.Contains(got.Problem, tc.problem)) {
			t.Errorf("report_path %q: %+v, want %+v with a problem saying %q", tc.given, got, tc.want, tc.problem)
		}
	}
	wstest.Unchanged(t, root, before)
}

type recorder struct {
	acts    []coord.Action
	verdict coord.Verdict
}

func (r *recorder) judge(a coord.Action) coord.Verdict { r.acts = append(r.acts, a); return r.verdict }

// submit_checklist puts the report facts to the coordinator with the
// scores; an agent without files puts none (the gate cannot apply).
func TestGatedChecklistPutsTheReportFactsWithTheScores(t *testing.T) {
	g, _, ws, _ := guardIn(t)
	write(t, filepath.Join(ws, "r.md"), "a report")
	r := &recorder{verdict: coord.Verdict{Outcome: coord.Accepted, Message: "ok"}}
	res := tool.GatedChecklistTool(r.judge, tool.ChecklistKit{Files: g}).Call(t.Context(), json.RawMessage(`{"scores": {"E1": 9}, "report_path": "r.md"}`))
	if res.IsError || len(r.acts) != 1 {
		t.Fatalf("%+v %+v", res, r.acts)
	}
	want := coord.Action{Kind: coord.ActChecklist, Content: `{"E1": 9}`, Report: &coord.ReportFacts{Path: "r.md", Chars: 8}}
	if diff := cmp.Diff(want, r.acts[0]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tool.GatedChecklistTool(r.judge, tool.ChecklistKit{}).Call(t.Context(), json.RawMessage(`{"scores": {"E1": 9}}`))
	if r.acts[1].Report != nil {
		t.Errorf("no files, yet report facts: %+v", r.acts[1].Report)
	}
	if res := tool.GatedChecklistTool(r.judge, tool.ChecklistKit{Files: g}).Call(t.Context(), json.RawMessage(`{"scores": {"E1": 9}, "report_path": 3}`)); !res.IsError || len(r.acts) != 2 {
		t.Errorf("a report_path that is no string: %+v", res)
	}
	if !strings.Contains(tool.GatedChecklistTool(r.judge, tool.ChecklistKit{}).Def().Parameters["properties"].(map[string]any)["report_path"].(map[string]any)["description"].(string), coord.DefaultReportPath) {
		t.Error("report_path's description does not name the default path")
	}
}

type injector struct {
	got []coord.DraftTask
	err error
}

func (i *injector) InjectDraft(p []coord.DraftTask) (int, error) { i.got = p; return len(p), i.err }

// A valid draft's tasks go into the agent's task plan and the reply says
// so (upstream's message); a refused one is an error result, unchanged.
func TestDraftApproachLaysItsTasksInThePlan(t *testing.T) {
	plan := []coord.DraftTask{{Type: "vision", Description: "v"}, {Type: "improve", CriterionID: "E1", Plan: "p"}}
	ok := coord.DraftResult{Valid: true, TaskPlan: plan, Message: "Improvements validated for 1 criteria."}
	r := &recorder{verdict: coord.Verdict{Outcome: coord.Accepted, Message: ok.JSON()}}
	in := &injector{}
	args := `{"improvements": {"E1": ["p"]}, "vision": "v"}`
	res := tool.DraftTool(r.judge, tool.ChecklistKit{Plan: in}).Call(context.Background(), json.RawMessage(args))
	if res.IsError || r.acts[0] != (coord.Action{Kind: coord.ActDraft, Content: args}) {
		t.Fatalf("%+v %+v", res, r.acts)
	}
	var got coord.DraftResult
	if err := json.Unmarshal([]byte(res.Content), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Valid || !strings.HasPrefix(got.Message, "Your task plan has been pre-populated with 2 items. Call get_task_plan") {
		t.Errorf("reply: %+v", got)
	}
	if diff := cmp.Diff(plan, in.got); diff != "" {
		t.Errorf("tasks laid (-want +got):\n%s", diff)
	}
	// Without task planning the reply is the coordinator's.
	if res := tool.DraftTool(r.judge, tool.ChecklistKit{}).Call(t.Context(), json.RawMessage(args)); res.Content != ok.JSON() {
		t.Errorf("no plan: %s", res.Content)
	}
	r.verdict = coord.Verdict{Outcome: coord.Rejected, Message: `{"valid":false,"error":"Missing improvements for: E3"}`}
	in.got = nil
	if res := tool.DraftTool(r.judge, tool.ChecklistKit{Plan: in}).Call(t.Context(), json.RawMessage(args)); !res.IsError || res.Content != r.verdict.Message || in.got != nil {
		t.Errorf("refused: %+v, laid %v", res, in.got)
	}
}
