package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Status is where a task stands.
type Status string

// The statuses of upstream's Task; completed and verified satisfy a
// dependency.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Verified   Status = "verified"
	Blocked    Status = "blocked"
)

var statuses = []Status{Pending, InProgress, Completed, Verified, Blocked}

var priorities = []string{"low", "medium", "high"}

// DefaultMaxTasks is max_tasks_per_plan when the config leaves it unset
// (upstream's default).
const DefaultMaxTasks = 10

// Task is one task, serialised as upstream's Task.to_dict.
type Task struct {
	ID           string         `json:"id"`
	Description  string         `json:"description"`
	Status       Status         `json:"status"`
	Priority     string         `json:"priority"`
	CreatedAt    string         `json:"created_at"`
	CompletedAt  *string        `json:"completed_at"`
	VerifiedAt   *string        `json:"verified_at"`
	Dependencies []string       `json:"dependencies"`
	Metadata     map[string]any `json:"metadata"`
	Execution    map[string]any `json:"execution,omitempty"`
}

// Plan is one agent's plan, serialised as upstream's TaskPlan.to_dict
// (tasks/plan.json).
type Plan struct {
	AgentID   string         `json:"agent_id"`
	Tasks     []*Task        `json:"tasks"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
	Subagents map[string]any `json:"subagents"`

	// framework are the ids of the tasks massgen added (preparation and
	// memory tasks): max_tasks_per_plan counts the others.
	framework map[string]bool
}

// Spec is a task as a tool call describes it.
type Spec struct {
	ID                 string
	Description        string
	DependsOn          []any // task ids (string) or, in create_task_plan, 0-based indices of earlier tasks
	Priority           string
	Verification       string
	VerificationMethod string
	Execution          map[string]any
	Metadata           map[string]any
	framework          bool
}

// Rules are what a plan enforces.
type Rules struct {
	MaxTasks            int  // the agent's own tasks at most (0: DefaultMaxTasks)
	RequireVerification bool // every task of the agent's needs `verification`
	now                 func() time.Time
}

func (r Rules) max() int {
	if r.MaxTasks > 0 {
		return r.MaxTasks
	}
	return DefaultMaxTasks
}

func (r Rules) stamp() string {
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	// Python's datetime.now().isoformat(): local time, microseconds.
	return now().Format("2006-01-02T15:04:05.000000")
}

func newPlan(owner string, r Rules) *Plan {
	ts := r.stamp()
	return &Plan{AgentID: owner, Tasks: []*Task{}, CreatedAt: ts, UpdatedAt: ts, Subagents: map[string]any{}}
}

// Get is the task with id, nil if none.
func (p *Plan) Get(id string) *Task {
	for _, t := range p.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func done(s Status) bool { return s == Completed || s == Verified }

// Blocking are the ids of t's dependencies not yet completed or verified.
func (p *Plan) Blocking(t *Task) []string {
	out := []string{}
	for _, d := range t.Dependencies {
		if dt := p.Get(d); dt == nil || !done(dt.Status) {
			out = append(out, d)
		}
	}
	return out
}

// Ready are the pending tasks whose dependencies are all done.
func (p *Plan) Ready() []*Task {
	out := []*Task{}
	for _, t := range p.Tasks {
		if t.Status == Pending && len(p.Blocking(t)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// BlockedTasks are the pending tasks waiting on a dependency.
func (p *Plan) BlockedTasks() []*Task {
	out := []*Task{}
	for _, t := range p.Tasks {
		if t.Status == Pending && len(p.Blocking(t)) > 0 {
			out = append(out, t)
		}
	}
	return out
}

func (p *Plan) own() int { return len(p.Tasks) - len(p.framework) }

func newID(i int) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("task_%d_%s", i, hex.EncodeToString(b[:]))
}

// check says what is wrong with s as a new task of p, given the ids it may
// depend on (deps resolved to ids already).
func (p *Plan) check(s Spec, deps []string, r Rules) error {
	if strings.TrimSpace(s.Description) == "" {
		return errors.New("a task needs a description")
	}
	if s.Priority != "" && !slices.Contains(priorities, s.Priority) {
		return fmt.Errorf("Invalid priority '%s'. Must be one of: %s", s.Priority, strings.Join(priorities, ", "))
	}
	if r.RequireVerification && !s.framework && strings.TrimSpace(s.Verification) == "" {
		d := s.Description
		if len(d) > 60 {
			d = d[:60]
		}
		return fmt.Errorf("Task '%s' is missing required 'verification' field. Provide acceptance criteria describing what success looks like.", d)
	}
	if p.Get(s.ID) != nil {
		return fmt.Errorf("Task ID already exists: %s", s.ID)
	}
	for _, d := range deps {
		if d == s.ID {
			return fmt.Errorf("Task %s: Self-dependency detected", s.ID)
		}
		if p.Get(d) == nil {
			return fmt.Errorf("Dependency task does not exist: %s", d)
		}
	}
	return nil
}

// insert adds a checked task after the task after ("" at the end).
func (p *Plan) insert(s Spec, deps []string, after string, r Rules) (*Task, error) {
	md := map[string]any{}
	for k, v := range s.Metadata {
		md[k] = v
	}
	if s.Verification != "" {
		md["verification"] = s.Verification
	}
	if s.VerificationMethod != "" {
		md["verification_method"] = s.VerificationMethod
	}
	exec, err := normalizeExecution(s.Execution)
	if err != nil {
		return nil, err
	}
	md["execution"] = exec
	t := &Task{ID: s.ID, Description: s.Description, Status: Pending, Priority: cmpOr(s.Priority, "medium"),
		CreatedAt: r.stamp(), Dependencies: append([]string{}, deps...), Metadata: md, Execution: exec}
	at := len(p.Tasks)
	if after != "" {
		i := slices.IndexFunc(p.Tasks, func(x *Task) bool { return x.ID == after })
		if i < 0 {
			return nil, fmt.Errorf("after_task_id not found: %s", after)
		}
		at = i + 1
	}
	p.Tasks = slices.Insert(p.Tasks, at, t)
	if cycle := p.cycle(); cycle != nil {
		p.Tasks = slices.Delete(p.Tasks, at, at+1)
		return nil, fmt.Errorf("Circular dependency detected for task: %s (%s)", s.ID, strings.Join(cycle, " -> "))
	}
	if s.framework {
		if p.framework == nil {
			p.framework = map[string]bool{}
		}
		p.framework[s.ID] = true
	}
	p.UpdatedAt = r.stamp()
	return t, nil
}

// cycle is a dependency cycle of p (its ids, first repeated last), nil
// when there is none. With dependencies only on existing tasks none can
// form; the check stays so that a plan read from disk cannot loop either.
func (p *Plan) cycle() []string {
	state := map[string]int{} // 1 on the stack, 2 done
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		switch state[id] {
		case 1:
			i := slices.Index(stack, id)
			return append(slices.Clone(stack[i:]), id)
		case 2:
			return nil
		}
		state[id] = 1
		stack = append(stack, id)
		if t := p.Get(id); t != nil {
			for _, d := range t.Dependencies {
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = 2
		return nil
	}
	for _, t := range p.Tasks {
		if c := visit(t.ID); c != nil {
			return c
		}
	}
	return nil
}

// normalizeExecution is upstream's normalize_task_execution: inline by
// default; delegate needs a subagent_type or subagent_id; checkpoint keeps
// its fields.
func normalizeExecution(raw map[string]any) (map[string]any, error) {
	mode, _ := raw["mode"].(string)
	typ := firstString(raw, "subagent_type", "subagent_name")
	id := firstString(raw, "subagent_id")
	if mode == "" {
		mode = "inline"
		if typ != "" || id != "" {
			mode = "delegate"
		}
	}
	switch mode {
	case "inline":
		if typ != "" || id != "" {
			return nil, errors.New("inline execution cannot include subagent_type or subagent_id")
		}
		return map[string]any{"mode": "inline"}, nil
	case "checkpoint":
		out := map[string]any{}
		for k, v := range raw {
			out[k] = v
		}
		out["mode"] = "checkpoint"
		return out, nil
	case "delegate":
		if typ == "" && id == "" {
			return nil, errors.New("Delegate execution requires subagent_type or subagent_id")
		}
		out := map[string]any{}
		for k, v := range raw {
			if k != "subagent_name" {
				out[k] = v
			}
		}
		if typ != "" {
			out["subagent_type"] = typ
		}
		return out, nil
	}
	return nil, errors.New("execution.mode must be 'inline', 'delegate', or 'checkpoint'")
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
