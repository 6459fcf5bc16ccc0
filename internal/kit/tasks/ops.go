package tasks

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Framework says which tasks massgen adds around the agent's own in
// create_task_plan, as upstream's planning server does.
type Framework struct {
	// Memory (filesystem memory with learning_capture_mode round): check
	// long-term memories first, save memories and write the verification
	// memo last.
	Memory bool
	// VerificationMemo (filesystem memory capturing only the memo during
	// the rounds): the memo task last.
	VerificationMemo bool
	// Evolving (auto_discover_custom_tools): write the evolving skill
	// first, update it with what was learnt last.
	Evolving bool
}

// The evolving skill's tasks (upstream's planning server).
const (
	createEvolving = "Create tasks/evolving_skill/SKILL.md with your workflow plan. See the Evolving Skills section in system prompt for format."
	updateEvolving = "Update tasks/evolving_skill/SKILL.md with learnings from this session:\n" +
		"1. Refine ## Workflow based on what actually worked\n" +
		"2. Update ## Tools to Create - ensure scripts exist in scripts/ directory\n" +
		"3. Add ## Learnings section with:\n" +
		"   - What worked well\n" +
		"   - What didn't work or needed adjustment\n" +
		"   - Tips for future use\n" +
		"4. Update ## Dependencies if you discovered better approaches\n\n" +
		"This makes the skill reusable for similar future tasks."
)

// memoTask is upstream's terminal write_verification_memo task.
const memoDescription = "Write/update TWO files for next-round continuity (see system prompt for full format details):\n" +
	"1. `memory/short_term/verification_latest.md` — replayable verification summary. Keep concise. Absolute paths allowed (normalized on injection).\n" +
	"2. `memory/short_term/essential_files_manifest.json` — MUST use this exact schema:\n" +
	`   {"version": 1, "summary": "one-line state", "files": [{"path": "relative/path", "why": "reason", "read_whole_file": true, "how_to_read": null}]}` + "\n" +
	"   Include main deliverables, config/spec files, changedoc, and verification-critical files."

// create makes a new plan of the agent's specs, with the framework's tasks
// around them; on an error nothing is made.
func create(owner string, specs []Spec, fw Framework, r Rules) (*Plan, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("tasks must hold at least one task")
	}
	if len(specs) > r.max() {
		return nil, fmt.Errorf("the plan has %d tasks, more than max_tasks_per_plan (%d): merge related tasks, or add the rest with add_task as tasks complete", len(specs), r.max())
	}
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
		if ids[i] == "" {
			ids[i] = newID(i)
		}
		if slices.Contains(ids[:i], ids[i]) {
			return nil, fmt.Errorf("Task ID already exists: %s", ids[i])
		}
	}
	deps := make([][]string, len(specs))
	for i, s := range specs {
		for _, d := range s.DependsOn {
			id, err := resolve(d, i, ids)
			if err != nil {
				return nil, err
			}
			deps[i] = append(deps[i], id)
		}
	}
	var pre, post []Spec
	if fw.Evolving {
		pre = append(pre, Spec{ID: "create_evolving_skill", Priority: "high", framework: true, Description: createEvolving})
		post = append(post, Spec{ID: "update_evolving_skill", Priority: "medium", framework: true, Description: updateEvolving})
	}
	if fw.Memory {
		pre = append(pre, Spec{ID: "prep_memory", Priority: "high", framework: true,
			Description: "Check long-term memories for relevant context from previous work. Consider patterns, decisions, or discoveries that could inform your approach to this task."})
		post = append(post, Spec{ID: "save_memories", Priority: "medium", framework: true,
			Description: "Document decisions to optimize future work: skill/tool effectiveness, approach patterns, lessons learned, user preferences"})
	}
	p := newPlan(owner, r)
	add := func(s Spec, deps []string) error {
		if err := p.check(s, deps, r); err != nil {
			return err
		}
		_, err := p.insert(s, deps, "", r)
		return err
	}
	for _, s := range pre {
		if slices.Contains(ids, s.ID) {
			s.ID = newID(len(p.Tasks)) // the agent's id wins
		}
		if err := add(s, nil); err != nil {
			return nil, err
		}
	}
	for i, s := range specs {
		s.ID = ids[i]
		if err := add(s, deps[i]); err != nil {
			return nil, err
		}
	}
	for _, s := range post {
		if p.Get(s.ID) != nil {
			s.ID = newID(len(p.Tasks))
		}
		if err := add(s, nil); err != nil {
			return nil, err
		}
	}
	if fw.Memory || fw.VerificationMemo {
		all := make([]string, len(p.Tasks))
		for i, t := range p.Tasks {
			all[i] = t.ID
		}
		id := "write_verification_memo"
		if p.Get(id) != nil {
			id += "_" + newID(0)[7:]
		}
		s := Spec{ID: id, Description: memoDescription, Priority: "medium", framework: true,
			Metadata: map[string]any{"type": "verification_replay_capture", "injected": true}}
		if err := add(s, all); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// resolve is dependency d of the task at index i of ids: a 0-based index
// of an earlier task, or the id of an earlier one.
func resolve(d any, i int, ids []string) (string, error) {
	switch v := d.(type) {
	case float64:
		if v != math.Trunc(v) || v < 0 || int(v) >= len(ids) {
			return "", fmt.Errorf("Task '%s': Invalid dependency index %v", ids[i], v)
		}
		if int(v) >= i {
			return "", fmt.Errorf("Task '%s': Dependencies must reference earlier tasks (index %d >= %d)", ids[i], int(v), i)
		}
		return ids[int(v)], nil
	case string:
		switch j := slices.Index(ids, v); {
		case v == ids[i]:
			return "", fmt.Errorf("Task %s: Self-dependency detected", ids[i])
		case j < 0:
			return "", fmt.Errorf("Task %s: Dependency %s not found in task list", ids[i], v)
		case j > i:
			return "", fmt.Errorf("Task %s: Dependencies must reference earlier tasks (%s comes later)", ids[i], v)
		}
		return v, nil
	}
	return "", fmt.Errorf("Task %s: a dependency must be a task id or a 0-based index, not %v", ids[i], d)
}

// add adds the agent's task s, after the task after ("" at the end).
func (p *Plan) add(s Spec, after string, r Rules) (*Task, error) {
	if p.own() >= r.max() {
		return nil, fmt.Errorf("the plan already has %d tasks, max_tasks_per_plan: complete or delete one first", r.max())
	}
	if s.ID == "" {
		s.ID = newID(len(p.Tasks))
	}
	var deps []string
	for _, d := range s.DependsOn {
		id, ok := d.(string)
		if !ok {
			return nil, fmt.Errorf("depends_on takes task ids, not %v", d)
		}
		deps = append(deps, id)
	}
	if err := p.check(s, deps, r); err != nil {
		return nil, err
	}
	return p.insert(s, deps, after, r)
}

// setStatus is update_task_status: the result upstream returns.
func (p *Plan) setStatus(id string, st Status, notes string, r Rules) (map[string]any, error) {
	if !slices.Contains(statuses, st) {
		return nil, fmt.Errorf("Invalid status '%s'. Must be one of: %s", st, joinStatuses())
	}
	t := p.Get(id)
	if t == nil {
		return nil, fmt.Errorf("Task not found: %s", id)
	}
	t.Status = st
	ts := r.stamp()
	p.UpdatedAt = ts
	out := map[string]any{"task": t}
	switch st {
	case Completed:
		t.CompletedAt = &ts
		if notes != "" {
			t.Metadata["completion_notes"] = notes
		}
		ready := []*Task{}
		for _, o := range p.Tasks {
			if o.Status == Pending && slices.Contains(o.Dependencies, id) && len(p.Blocking(o)) == 0 {
				ready = append(ready, o)
			}
		}
		out["newly_ready_tasks"] = ready
		if v, _ := t.Metadata["verification"].(string); v != "" {
			out["verification_pending"] = true
			out["verification"] = v
			if m, ok := t.Metadata["verification_method"]; ok {
				out["verification_method"] = m
			}
			n := 0
			for _, o := range p.Tasks {
				if v, _ := o.Metadata["verification"].(string); o.Status == Completed && v != "" {
					n++
				}
			}
			out["unverified_count"] = n
		}
		if t.Priority == "high" {
			out["reminder"] = "High-priority task completed: reflect on what you learned and whether the rest of the plan still fits."
		}
	case Verified:
		t.VerifiedAt = &ts
		if notes != "" {
			t.Metadata["verification_notes"] = notes
		}
	}
	return out, nil
}

func joinStatuses() string {
	s := make([]string, len(statuses))
	for i, x := range statuses {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// remove is delete_task: refused while another task depends on it.
func (p *Plan) remove(id string, r Rules) error {
	i := slices.IndexFunc(p.Tasks, func(t *Task) bool { return t.ID == id })
	if i < 0 {
		return fmt.Errorf("Task not found: %s", id)
	}
	for _, o := range p.Tasks {
		if slices.Contains(o.Dependencies, id) {
			return fmt.Errorf("Cannot delete task %s: task %s depends on it", id, o.ID)
		}
	}
	delete(p.framework, id)
	p.Tasks = slices.Delete(p.Tasks, i, i+1)
	p.UpdatedAt = r.stamp()
	return nil
}
