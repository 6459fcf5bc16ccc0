package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// ChecklistKit is what checklist-gated voting's tools need of the agent
// beyond the coordinator: its files, to read the diagnostic report, and
// its task plan, for draft_approach to lay its tasks in. Either may be
// nil: an agent without a workspace has no report to read (the report
// gate passes it), one without task planning gets the plan in the reply
// only.
type ChecklistKit struct {
	Files ReportFiles
	Plan  PlanInjector
}

// ReportFiles is what submit_checklist reads the report through: the
// agent's Guard (*workspace.Guard), so it reads nothing the agent was not
// given, and only a file of the agent's own workspace counts.
type ReportFiles interface {
	Peek(p string, max int64) (data []byte, size int64, real string, err error)
	Workspace() string
}

// PlanInjector lays a valid draft's tasks in the agent's task plan and
// says how many it laid.
type PlanInjector interface {
	InjectDraft(plan []coord.DraftTask) (int, error)
}

// maxReport bounds the report read: its length is all the gate needs.
const maxReport = 1 << 20

// ReadReport is what the agent's diagnostic report holds for the gate:
// report_path as given (relative to the workspace, or absolute inside
// it), or coord.DefaultReportPath when none was given and that file
// exists. A path the Guard refuses, or one outside the agent's own
// workspace (another agent's snapshot, a context path), is a Problem.
func ReadReport(files ReportFiles, given string) coord.ReportFacts {
	p := strings.TrimSpace(given)
	if p == "" {
		p = coord.DefaultReportPath
	}
	data, _, real, err := files.Peek(p, maxReport)
	switch {
	case given == "" && errors.Is(err, fs.ErrNotExist):
		return coord.ReportFacts{}
	case errors.Is(err, fs.ErrNotExist):
		return coord.ReportFacts{Path: given, Problem: "Report file not found: " + given}
	case err != nil:
		return coord.ReportFacts{Path: p, Problem: "Report file unreadable: " + err.Error()}
	}
	ws := files.Workspace()
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	if rel, err := filepath.Rel(ws, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return coord.ReportFacts{Path: p, Problem: fmt.Sprintf("Report path must stay inside your workspace: %s is not in it", p)}
	}
	return coord.ReportFacts{Path: p, Chars: utf8.RuneCountInString(strings.TrimSpace(string(data)))}
}

// GatedChecklistTool is submit_checklist as an LLM agent's tool: as
// ChecklistTool, with the diagnostic report read through kit.Files and
// put to judge with the scores.
func GatedChecklistTool(judge Judge, kit ChecklistKit) Tool { return gatedChecklist{judge, kit} }

type gatedChecklist struct {
	judge Judge
	kit   ChecklistKit
}

func (gatedChecklist) Def() llm.ToolDef {
	d := Checklist()
	props := d.Parameters["properties"].(map[string]any)
	props["report_path"] = map[string]any{"type": "string", "description": "Your diagnostic report: a markdown file in your workspace " +
		"with a section per criterion naming concrete gaps (default " + coord.DefaultReportPath + "). Required unless the run turned the report gate off."}
	return d
}

func (c gatedChecklist) Call(_ context.Context, args json.RawMessage) Result {
	var a struct {
		Scores     json.RawMessage `json:"scores"`
		ReportPath any             `json:"report_path"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a.Scores) == 0 {
		return Result{Content: `submit_checklist needs a "scores" object: {"agent1": {"E1": 8, …}, …}`, IsError: true}
	}
	act := coord.Action{Kind: coord.ActChecklist, Content: string(a.Scores)}
	if c.kit.Files != nil {
		path, ok := a.ReportPath.(string)
		if a.ReportPath != nil && !ok {
			return Result{Content: "Invalid `report_path`: expected a string path.", IsError: true}
		}
		f := ReadReport(c.kit.Files, path)
		act.Report = &f
	}
	v := c.judge(act)
	return Result{Content: v.Message, IsError: v.Outcome != coord.Accepted}
}

// Draft is draft_approach's definition (upstream's stdio form; plan, the
// SDK form's name for improvements, is accepted too).
func Draft() llm.ToolDef {
	entry := map[string]any{"type": "object", "properties": map[string]any{
		"plan":    map[string]any{"type": "string", "description": "What to do."},
		"sources": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Which answers to draw from (labels), or \"fresh\" for new ideas."},
		"impact":  map[string]any{"type": "string", "enum": []string{"transformative", "structural", "incremental"}},
	}}
	return llm.ToolDef{
		Name: coord.ToolDraft,
		Description: "Propose what to build for your next answer. Must be called after submit_checklist returns an iterate verdict. " +
			"Pass 'improvements' mapping criterion IDs (e.g. 'E2') to lists of entries, each with 'plan' (what to do) and 'sources' " +
			"(which answers to draw from, or 'fresh' for new ideas). Optionally pass 'vision' for a north-star description of the ideal " +
			"output. Pass 'preserve' mapping criterion IDs to entries with 'what' (strength to protect) and 'source' (which answer).",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"improvements": map[string]any{"type": "object", "description": "Failing criterion id → list of improvements.",
					"additionalProperties": map[string]any{"type": "array", "items": entry}},
				"preserve": map[string]any{"type": "object", "description": "Criterion id → {what, source}: strengths the next answer must keep.",
					"additionalProperties": map[string]any{"type": "object", "properties": map[string]any{
						"what": map[string]any{"type": "string"}, "source": map[string]any{"type": "string"}}}},
				"vision": map[string]any{"type": "string", "description": "What a great answer would look like."},
			},
			"required": []string{"improvements"},
		},
	}
}

// DraftTool is draft_approach as a Tool: the coordinator judges the draft
// against the agent's checklist; a valid one's tasks go into the agent's
// task plan through kit.Plan, and the reply says so, as upstream's.
func DraftTool(judge Judge, kit ChecklistKit) Tool { return draftTool{judge, kit} }

type draftTool struct {
	judge Judge
	kit   ChecklistKit
}

func (draftTool) Def() llm.ToolDef { return Draft() }

func (d draftTool) Call(_ context.Context, args json.RawMessage) Result {
	if len(args) == 0 || !json.Valid(args) {
		return Result{Content: coord.DraftResult{Error: "draft_approach's arguments must be a JSON object"}.JSON(), IsError: true}
	}
	v := d.judge(coord.Action{Kind: coord.ActDraft, Content: string(args)})
	if v.Outcome != coord.Accepted || d.kit.Plan == nil {
		return Result{Content: v.Message, IsError: v.Outcome != coord.Accepted}
	}
	var res coord.DraftResult
	if err := json.Unmarshal([]byte(v.Message), &res); err != nil {
		return Result{Content: v.Message}
	}
	n, err := d.kit.Plan.InjectDraft(res.TaskPlan)
	if err != nil {
		// As upstream: the plan still reaches the agent in the reply.
		res.Message += " (The task plan could not be pre-populated: " + err.Error() + "; add the items yourself.)"
		return Result{Content: res.JSON()}
	}
	res.Message = fmt.Sprintf("Your task plan has been pre-populated with %d items. Call get_task_plan to see the list and start "+
		"executing. Correctness-critical tasks come first; if explicit correctness criteria exist, use them as anchors. Preserve items "+
		"are the final regression check — verify after implementing that preserved strengths remain and earlier correctness fixes still "+
		"hold. Do not defer blocker correctness fixes in favor of easier polish.", n)
	return Result{Content: res.JSON()}
}
