package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Names are the planning tools' names, in the order they are offered.
var Names = []string{"create_task_plan", "add_task", "update_task_status", "edit_task", "get_task_plan",
	"get_ready_tasks", "get_blocked_tasks", "delete_task", "clear_task_plan"}

// taskSpec is a task as the tools take it (create_task_plan's items,
// add_task's arguments).
type taskSpec struct {
	ID                 string         `json:"id"`
	Description        string         `json:"description"`
	DependsOn          []any          `json:"depends_on"`
	Dependencies       []any          `json:"dependencies"`
	Priority           string         `json:"priority"`
	Verification       string         `json:"verification"`
	VerificationMethod string         `json:"verification_method"`
	VerificationGroup  string         `json:"verification_group"`
	Execution          map[string]any `json:"execution"`
	Metadata           map[string]any `json:"metadata"`
	SubagentID         string         `json:"subagent_id"`
	SubagentName       string         `json:"subagent_name"`
}

func (s taskSpec) spec() Spec {
	out := Spec{ID: s.ID, Description: s.Description, DependsOn: s.DependsOn, Priority: s.Priority,
		Verification: s.Verification, VerificationMethod: s.VerificationMethod, Metadata: map[string]any{}}
	if out.DependsOn == nil {
		out.DependsOn = s.Dependencies
	}
	for k, v := range s.Metadata {
		out.Metadata[k] = v
	}
	if out.Verification == "" {
		out.Verification, _ = s.Metadata["verification"].(string)
	}
	if out.VerificationMethod == "" {
		out.VerificationMethod, _ = s.Metadata["verification_method"].(string)
	}
	if s.VerificationGroup != "" {
		out.Metadata["verification_group"] = s.VerificationGroup
	}
	exec := s.Execution
	if exec == nil {
		exec, _ = s.Metadata["execution"].(map[string]any)
	}
	if s.SubagentID != "" || s.SubagentName != "" {
		exec = map[string]any{"subagent_id": s.SubagentID, "subagent_name": s.SubagentName}
		if s.SubagentID == "" {
			delete(exec, "subagent_id")
		}
		if s.SubagentName == "" {
			delete(exec, "subagent_name")
		}
	}
	out.Execution = exec
	return out
}

// decodeSpecs reads create_task_plan's tasks: each an object, or (as
// upstream also takes) a bare description.
func decodeSpecs(raw []json.RawMessage) ([]Spec, error) {
	out := make([]Spec, 0, len(raw))
	for i, r := range raw {
		var desc string
		if json.Unmarshal(r, &desc) == nil {
			out = append(out, Spec{Description: desc})
			continue
		}
		var s taskSpec
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("Invalid task specification at index %d: %v", i, err)
		}
		out = append(out, s.spec())
	}
	return out, nil
}

// Tools are the nine planning tools over this planner.
func (pl *Planner) Tools() []tool.Tool {
	return []tool.Tool{
		pl.tool("create_task_plan", createDesc, obj(map[string]any{"tasks": map[string]any{"type": "array",
			"description": "The tasks, in order. Each: description (required), verification (acceptance criteria; required), verification_method, id, depends_on (ids or 0-based indices of earlier tasks), priority (low/medium/high), execution.",
			"items":       taskSchema(true)}}, "tasks"), pl.create),
		pl.tool("add_task", addDesc, taskSchema(false), pl.addTask),
		pl.tool("update_task_status", statusDesc, obj(map[string]any{
			"task_id":          str("ID of the task to update"),
			"status":           map[string]any{"type": "string", "enum": []string{"pending", "in_progress", "completed", "verified", "blocked"}, "description": "New status"},
			"completion_notes": str("Optional notes (for 'completed': how it was done; for 'verified': what was tested)"),
		}, "task_id", "status"), pl.status),
		pl.tool("edit_task", "Edit a task's description.", obj(map[string]any{
			"task_id": str("ID of the task to edit"), "description": str("New description (if provided)")}, "task_id"), pl.edit),
		pl.tool("get_task_plan", "Get the current task plan for this agent: every task with its status, and a summary (total, completed, verified, in progress, ready, blocked, awaiting verification).",
			obj(nil), pl.get),
		pl.tool("get_ready_tasks", "Get all tasks that are ready to start: status 'pending' with every dependency completed or verified.", obj(nil), pl.ready),
		pl.tool("get_blocked_tasks", "Get all tasks that are blocked by incomplete dependencies, with the ids each one waits on (blocking_task_ids).", obj(nil), pl.blocked),
		pl.tool("delete_task", "Remove a task from the plan. Refused while another task depends on it.",
			obj(map[string]any{"task_id": str("ID of the task to delete")}, "task_id"), pl.deleteTask),
		pl.tool("clear_task_plan", "Clear the current task plan to start fresh. Removes all tasks. Called by the framework when the agent restarts.", obj(nil), pl.clear),
	}
}

const createDesc = `Create a new task plan with a list of tasks. Each task is an object with:
- description (str): Task description (required)
- verification (str): Acceptance criteria: what success looks like (required)
- verification_method (str): How to verify it, output-first (strongly recommended)
- id (str): Custom task ID (optional, generated if not provided)
- depends_on (list): Task IDs or 0-based indices of earlier tasks this task depends on
- priority (str): "low", "medium" or "high" (default "medium"); mark the core deliverables "high"
- execution (object): {"mode": "inline"} to do it yourself (default)
Dependencies must reference earlier tasks in the list; circular dependencies are rejected. Tasks with no dependencies can start immediately. Refused if a plan already exists: use get_task_plan and add_task then.`

const addDesc = "Add a new task to the plan. description is required; verification (acceptance criteria) is required by default. " +
	"after_task_id inserts it after that task (otherwise it is appended); depends_on lists the ids of tasks it waits on; priority is low, medium (default) or high."

const statusDesc = "Update the status of a task. Status flow: pending -> in_progress -> completed -> verified. " +
	"'completed': the implementation is done, but may need verification; 'verified': tested and confirmed working. " +
	"Completing a task reports the tasks it unblocked (newly_ready_tasks)."

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func obj(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// taskSchema is a task's schema: create_task_plan's items (indices allowed
// in depends_on) or add_task's arguments (after_task_id too).
func taskSchema(inPlan bool) map[string]any {
	dep := map[string]any{"type": "array", "description": "IDs of the tasks this task depends on", "items": map[string]any{"type": "string"}}
	if inPlan {
		dep = map[string]any{"type": "array", "description": "IDs or 0-based indices of earlier tasks this task depends on",
			"items": map[string]any{"type": []string{"string", "integer"}}}
	}
	props := map[string]any{
		"description":         str("Task description"),
		"depends_on":          dep,
		"priority":            map[string]any{"type": "string", "enum": priorities, "description": "Task priority (default medium)"},
		"verification":        str("What success looks like (acceptance criteria)"),
		"verification_method": str("How to verify it (specific steps)"),
		"execution":           map[string]any{"type": "object", "description": `Execution plan: {"mode": "inline"} to do it yourself`},
	}
	if inPlan {
		props["id"] = str("Custom task ID (optional)")
	} else {
		props["after_task_id"] = str("Optional ID of the task to insert it after (otherwise it is appended)")
	}
	return obj(props, "description")
}

// handler runs one call with the planner's lock held and returns the
// fields of upstream's result besides success and operation.
type handler func(args json.RawMessage) (map[string]any, error)

func (pl *Planner) tool(name, desc string, schema map[string]any, h handler) tool.Tool {
	return tool.Func(llm.ToolDef{Name: name, Description: desc, Parameters: schema}, func(ctx context.Context, args json.RawMessage) (string, error) {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		fields, err := h(args)
		res := map[string]any{"success": err == nil, "operation": name}
		if err != nil {
			res["error"] = err.Error()
		}
		for k, v := range fields {
			res[k] = v
		}
		data, _ := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return "", errors.New(string(data))
		}
		return string(data), nil
	})
}

func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

func (pl *Planner) create(args json.RawMessage) (map[string]any, error) {
	var a struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if p := pl.current(); len(p.Tasks) > 0 {
		n := map[Status]int{}
		for _, t := range p.Tasks {
			n[t.Status]++
		}
		return nil, fmt.Errorf("A task plan already exists with %d tasks (%d completed, %d in_progress, %d pending). "+
			"Use get_task_plan to see current state, or add_task to add new tasks.", len(p.Tasks), n[Completed], n[InProgress], n[Pending])
	}
	specs, err := decodeSpecs(a.Tasks)
	if err != nil {
		return nil, err
	}
	p, err := create(pl.o.Owner, specs, pl.o.Framework, pl.o.Rules)
	if err != nil {
		return nil, err
	}
	pl.plan = p
	if err := pl.save(); err != nil {
		return nil, err
	}
	return map[string]any{"plan_id": p.AgentID, "tasks": p.Tasks,
		"summary": map[string]any{"total_tasks": len(p.Tasks), "ready_tasks": len(p.Ready()), "blocked_tasks": len(p.BlockedTasks())}}, nil
}

func (pl *Planner) addTask(args json.RawMessage) (map[string]any, error) {
	var a struct {
		taskSpec
		AfterTaskID string `json:"after_task_id"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	s := a.spec()
	s.ID = "" // add_task takes no id: upstream generates one
	t, err := pl.current().add(s, a.AfterTaskID, pl.o.Rules)
	if err != nil {
		return nil, err
	}
	return map[string]any{"task": t}, pl.save()
}

func (pl *Planner) status(args json.RawMessage) (map[string]any, error) {
	var a struct {
		TaskID          string `json:"task_id"`
		Status          Status `json:"status"`
		CompletionNotes string `json:"completion_notes"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	out, err := pl.current().setStatus(a.TaskID, a.Status, a.CompletionNotes, pl.o.Rules)
	if err != nil {
		return nil, err
	}
	return out, pl.save()
}

func (pl *Planner) edit(args json.RawMessage) (map[string]any, error) {
	var a struct {
		TaskID      string  `json:"task_id"`
		Description *string `json:"description"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	p := pl.current()
	t := p.Get(a.TaskID)
	if t == nil {
		return nil, fmt.Errorf("Task not found: %s", a.TaskID)
	}
	if a.Description != nil {
		t.Description = *a.Description
	}
	p.UpdatedAt = pl.o.stamp()
	return map[string]any{"task": t}, pl.save()
}

func (pl *Planner) get(json.RawMessage) (map[string]any, error) {
	p := pl.current()
	n := map[Status]int{}
	groups := map[string][]*Task{}
	for _, t := range p.Tasks {
		n[t.Status]++
		if t.Status == Completed {
			g, _ := t.Metadata["verification_group"].(string)
			g = cmpOr(g, "ungrouped")
			groups[g] = append(groups[g], t)
		}
	}
	return map[string]any{"plan": p, "verification_groups": groups, "summary": map[string]any{
		"total_tasks": len(p.Tasks), "completed_tasks": n[Completed], "verified_tasks": n[Verified],
		"in_progress_tasks": n[InProgress], "ready_tasks": len(p.Ready()), "blocked_tasks": len(p.BlockedTasks()),
		"awaiting_verification": n[Completed]}}, nil
}

func (pl *Planner) ready(json.RawMessage) (map[string]any, error) {
	r := pl.current().Ready()
	return map[string]any{"ready_tasks": r, "count": len(r)}, nil
}

func (pl *Planner) blocked(json.RawMessage) (map[string]any, error) {
	p := pl.current()
	type blockedTask struct {
		*Task
		BlockingTaskIDs []string `json:"blocking_task_ids"`
	}
	out := []blockedTask{}
	for _, t := range p.BlockedTasks() {
		out = append(out, blockedTask{t, p.Blocking(t)})
	}
	return map[string]any{"blocked_tasks": out, "count": len(out)}, nil
}

func (pl *Planner) deleteTask(args json.RawMessage) (map[string]any, error) {
	var a struct {
		TaskID string `json:"task_id"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if err := pl.current().remove(a.TaskID, pl.o.Rules); err != nil {
		return nil, err
	}
	return map[string]any{"deleted_task_id": a.TaskID}, pl.save()
}

func (pl *Planner) clear(json.RawMessage) (map[string]any, error) {
	had, err := pl.reset()
	return map[string]any{"had_existing_plan": had}, err
}
