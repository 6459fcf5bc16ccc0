package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// Tools are the subagent tools of m's agent, named and shaped as upstream's
// subagent MCP server offers them (mcp_tools/subagent/_subagent_mcp_server.py).
func (m *Manager) Tools() []tool.Tool {
	return []tool.Tool{
		tool.Func(m.spawnDef(), m.spawn),
		tool.Func(llm.ToolDef{Name: "list_subagents",
			Description: "List all subagents spawned by this agent with their current status, elapsed_seconds and seconds_remaining " +
				"(while running), workspace, and the answer of those that finished.",
			Parameters: schema(map[string]any{}, nil)}, m.list),
		tool.Func(llm.ToolDef{Name: "continue_subagent",
			Description: "Continue a previously spawned subagent that has finished (completed, timed out or failed) with a new message: " +
				"it runs again with its earlier exchange and the message. background: true returns at once.",
			Parameters: schema(map[string]any{
				"subagent_id":     map[string]any{"type": "string", "description": "ID of the subagent to continue (from spawn_subagents or list_subagents)"},
				"message":         map[string]any{"type": "string", "description": "New message to send to the subagent"},
				"timeout_seconds": map[string]any{"type": "integer", "description": "Optional timeout override (clamped to the configured bounds)"},
				"background":      map[string]any{"type": "boolean", "description": "If true, continue in background and return immediately", "default": false},
			}, []string{"subagent_id", "message"})}, m.continueTool),
		tool.Func(llm.ToolDef{Name: "send_message_to_subagent",
			Description: "Send a runtime message to a currently running background subagent: its agents read it with the result of their next tool call. " +
				"Use it to steer a subagent without waiting for it to finish.",
			Parameters: schema(map[string]any{
				"subagent_id": map[string]any{"type": "string", "description": "ID of the running subagent"},
				"message":     map[string]any{"type": "string", "description": "Message content to deliver"},
				"target_agents": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
					"description": "Optional inner agent IDs to target; none broadcasts to all agents of the subagent"},
			}, []string{"subagent_id", "message"})}, m.send),
		tool.Func(llm.ToolDef{Name: "cancel_subagent", Description: "Cancel a running subagent.",
			Parameters: schema(map[string]any{
				"subagent_id": map[string]any{"type": "string", "description": "ID of the subagent to cancel"},
			}, []string{"subagent_id"})}, m.cancelTool),
	}
}

func schema(props map[string]any, required []string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (m *Manager) spawnDef() llm.ToolDef {
	var types strings.Builder
	for _, t := range m.set.Types {
		fmt.Fprintf(&types, "\n- %s: %s", t.Name, t.Description)
	}
	task := map[string]any{"type": "object", "properties": map[string]any{
		"task":                     map[string]any{"type": "string", "description": "What the subagent is to do (required)"},
		"subagent_id":              map[string]any{"type": "string", "description": "Optional identifier, unique across this agent's subagents"},
		"subagent_type":            map[string]any{"type": "string", "description": "Optional specialised type: its prompt becomes the subagent's system message"},
		"context_paths":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Extra paths shared read-only"},
		"include_parent_workspace": map[string]any{"type": "boolean", "default": true, "description": "Share your workspace read-only"},
		"include_temp_workspace":   map[string]any{"type": "boolean", "default": true, "description": "Share your view of the other agents' work read-only"},
		"context_files":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Files shared read-only"},
	}, "required": []string{"task"}}
	return llm.ToolDef{Name: "spawn_subagents",
		Description: fmt.Sprintf("Spawn subagents to work on INDEPENDENT tasks in PARALLEL (at most %d per call). Each subagent is a whole MassGen run "+
			"with its own workspace. CONTEXT.md must exist in your workspace first (describe the project and its goal). Tasks start at the "+
			"same time: do not make one depend on another. Your workspace and context paths are shared READ-ONLY: a subagent writes only "+
			"its own workspace, whose path is always returned; read its files there. background: true returns at once, and the results "+
			"come with your later tool results (or list_subagents). refine: false takes a subagent's first answer.%s",
			m.set.MaxConcurrent, func() string {
				if types.Len() == 0 {
					return ""
				}
				return "\nSpecialised types (subagent_type):" + types.String()
			}()),
		Parameters: schema(map[string]any{
			"tasks":         map[string]any{"type": "array", "items": task, "maxItems": m.set.MaxConcurrent, "description": "The tasks, one subagent each"},
			"background":    map[string]any{"type": "boolean", "default": false, "description": "Return at once; results come later"},
			"refine":        map[string]any{"type": "boolean", "default": true, "description": "Let each subagent refine over rounds"},
			"context_paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Read-only paths for every task"},
		}, []string{"tasks"})}
}

// reply is a tool result as upstream's tools return it: a JSON object.
func reply(v map[string]any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}

func failure(op string, err error) (string, error) {
	return reply(map[string]any{"success": false, "operation": op, "error": err.Error()})
}

func (m *Manager) spawn(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct {
		Tasks        []Task   `json:"tasks"`
		Background   bool     `json:"background"`
		Refine       *bool    `json:"refine"`
		ContextPaths []string `json:"context_paths"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return failure("spawn_subagents", fmt.Errorf("invalid arguments: %v", err))
	}
	refine := in.Refine == nil || *in.Refine
	cs, err := m.prepare(in.Tasks, in.ContextPaths, refine)
	if err != nil {
		return failure("spawn_subagents", err)
	}
	charge := tool.ChargeOf(ctx)
	var started []*child
	for _, c := range cs {
		if err := m.start(ctx, c, in.Background, charge); err != nil {
			return failure("spawn_subagents", err)
		}
		started = append(started, c)
	}
	if in.Background {
		var subs []map[string]any
		for _, c := range started {
			subs = append(subs, map[string]any{"subagent_id": c.id, "status": StatusRunning, "workspace": c.dir,
				"timeout_seconds": int(c.timeout.Seconds())})
		}
		return reply(map[string]any{"success": true, "operation": "spawn_subagents", "mode": "background", "subagents": subs,
			"note": "Results will be automatically injected when subagents complete (with your next tool results); list_subagents shows them too."})
	}
	wait(ctx, started)
	results := make([]map[string]any, 0, len(started))
	sum := map[string]int{"total": len(started)}
	all := true
	for _, c := range started {
		r := m.result(c)
		results = append(results, r)
		switch r["status"] {
		case StatusCompleted, StatusCompletedButTimeout:
			sum["completed"]++
		case StatusError, StatusCancelled:
			sum["failed"]++
			all = false
		case StatusTimeout:
			all = false
		}
		if r["status"] == StatusTimeout || r["status"] == StatusCompletedButTimeout {
			sum["timeout"]++
		}
	}
	return reply(map[string]any{"success": all, "operation": "spawn_subagents", "mode": "blocking", "results": results, "summary": sum})
}

// result is a child's result as spawn_subagents and continue_subagent
// return it.
func (m *Manager) result(c *child) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := map[string]any{"subagent_id": c.id, "status": c.status, "workspace": c.dir, "timeout_seconds": int(c.timeout.Seconds()),
		"success": c.status == StatusCompleted || c.status == StatusCompletedButTimeout}
	if c.typ != "" {
		r["subagent_type"] = c.typ
	}
	if c.status == StatusRunning {
		r["elapsed_seconds"] = round(time.Since(c.started).Seconds())
		r["seconds_remaining"] = round(max(0, (c.timeout - time.Since(c.started)).Seconds()))
		return r
	}
	rep := c.report
	if rep.Answer != "" {
		r["answer"] = rep.Answer
	} else {
		r["answer"] = nil
	}
	if rep.Workspace != "" {
		r["workspace"] = rep.Workspace
	}
	if rep.LogDir != "" {
		r["log_path"] = rep.LogDir
	}
	if rep.Err != nil && c.status != StatusCompleted {
		r["error"] = rep.Err.Error()
	}
	r["execution_time_seconds"] = round(c.ended.Sub(c.started).Seconds())
	r["token_usage"] = map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": rep.Usage.OutputTokens}
	r["cost_usd"] = rep.CostUSD
	return r
}

func round(x float64) float64 { return math.Round(x*10) / 10 }

func (m *Manager) list(context.Context, json.RawMessage) (string, error) {
	var subs []map[string]any
	for _, id := range m.Children() {
		m.mu.Lock()
		c := m.children[id]
		task, continuable := c.task, c.status != StatusRunning
		m.mu.Unlock()
		r := m.result(c)
		r["task"] = cut(task, 500)
		r["continuable"] = continuable
		subs = append(subs, r)
	}
	if subs == nil {
		subs = []map[string]any{}
	}
	return reply(map[string]any{"success": true, "operation": "list_subagents", "subagents": subs, "count": len(subs)})
}

func (m *Manager) find(id string) (*child, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.TrimSpace(id) == "" {
		return nil, fmt.Errorf("Missing required 'subagent_id' parameter")
	}
	c := m.children[id]
	if c == nil {
		return nil, fmt.Errorf("no subagent %q; list_subagents shows yours", id)
	}
	return c, nil
}

func (m *Manager) continueTool(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct {
		ID         string `json:"subagent_id"`
		Message    string `json:"message"`
		Timeout    *int   `json:"timeout_seconds"`
		Background bool   `json:"background"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return failure("continue_subagent", fmt.Errorf("invalid arguments: %v", err))
	}
	c, err := m.find(in.ID)
	if err != nil {
		return failure("continue_subagent", err)
	}
	if strings.TrimSpace(in.Message) == "" {
		return failure("continue_subagent", fmt.Errorf("Missing required 'message' parameter"))
	}
	m.mu.Lock()
	if c.status == StatusRunning {
		m.mu.Unlock()
		return failure("continue_subagent", fmt.Errorf("subagent %s is still running: send_message_to_subagent steers it, cancel_subagent stops it", c.id))
	}
	c.task = in.Message
	c.timeout = m.set.clamp(m.set.DefaultTimeout)
	if in.Timeout != nil {
		c.timeout = m.set.clamp(time.Duration(*in.Timeout) * time.Second)
	}
	m.mu.Unlock()
	if err := m.start(ctx, c, in.Background, tool.ChargeOf(ctx)); err != nil {
		return failure("continue_subagent", err)
	}
	if in.Background {
		return reply(map[string]any{"success": true, "operation": "continue_subagent", "mode": "background",
			"subagents": []map[string]any{{"subagent_id": c.id, "status": StatusRunning, "workspace": c.dir, "timeout_seconds": int(c.timeout.Seconds())}},
			"note":      "Results will be automatically injected when subagent completes."})
	}
	wait(ctx, []*child{c})
	r := m.result(c)
	r["operation"], r["mode"] = "continue_subagent", "blocking"
	return reply(r)
}

func (m *Manager) send(_ context.Context, args json.RawMessage) (string, error) {
	var in struct {
		ID      string   `json:"subagent_id"`
		Message string   `json:"message"`
		Targets []string `json:"target_agents"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return failure("send_message", fmt.Errorf("invalid arguments: %v", err))
	}
	c, err := m.find(in.ID)
	if err != nil {
		return failure("send_message", err)
	}
	if strings.TrimSpace(in.Message) == "" {
		return failure("send_message", fmt.Errorf("Missing required 'message' parameter"))
	}
	m.mu.Lock()
	running, inbox := c.status == StatusRunning, c.inbox
	m.mu.Unlock()
	if !running {
		return failure("send_message", fmt.Errorf("subagent %s is not running (%s): continue_subagent gives a finished one a new message", c.id, c.status))
	}
	inbox.Post(in.Message, in.Targets)
	return reply(map[string]any{"success": true, "subagent_id": c.id, "operation": "send_message"})
}

func (m *Manager) cancelTool(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct {
		ID string `json:"subagent_id"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return failure("cancel_subagent", fmt.Errorf("invalid arguments: %v", err))
	}
	c, err := m.find(in.ID)
	if err != nil {
		return failure("cancel_subagent", err)
	}
	m.mu.Lock()
	running, cancel, done := c.status == StatusRunning, c.cancel, c.done
	m.mu.Unlock()
	if !running {
		return failure("cancel_subagent", fmt.Errorf("subagent %s is not running (%s)", c.id, c.status))
	}
	cancel(errCancelled)
	select { // it stops at once; what it spent until then is charged
	case <-done:
	case <-ctx.Done():
	}
	return reply(map[string]any{"success": true, "operation": "cancel_subagent", "subagent_id": c.id, "status": StatusCancelled})
}
