package tasks

import (
	"fmt"
	"maps"
	"strings"
)

// Inject adds tasks written for the agent (checklist-gated voting's
// draft_approach: one task per planned improvement, a vision first, a
// regression check last) at the end of its plan, as upstream's planning
// server adds the tasks of inject_tasks.json: no verification is required
// of them, they are marked "injected" in their metadata and do not count
// against max_tasks_per_plan, and a verification memo task moves after
// them, depending on every task, so the memo stays last. It returns the
// ids it gave; on an error the plan is as it was.
func (pl *Planner) Inject(specs []Spec) ([]string, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	p := pl.current()
	before := append([]*Task(nil), p.Tasks...)
	frameworkBefore := maps.Clone(p.framework)
	restore := func() { p.Tasks, p.framework = before, frameworkBefore }
	r := pl.o.Rules
	r.RequireVerification = false
	var ids []string
	for i, s := range specs {
		if s.ID == "" {
			s.ID = newID(len(p.Tasks) + i)
		}
		s.framework = true
		s.Metadata = maps.Clone(s.Metadata)
		if s.Metadata == nil {
			s.Metadata = map[string]any{}
		}
		s.Metadata["injected"] = true
		if err := p.check(s, nil, r); err != nil {
			restore()
			return nil, fmt.Errorf("injected task %d: %w", i+1, err)
		}
		t, err := p.insert(s, nil, "", r)
		if err != nil {
			restore()
			return nil, fmt.Errorf("injected task %d: %w", i+1, err)
		}
		ids = append(ids, t.ID)
	}
	// The memo was laid last by create_task_plan, before these existed.
	var memos, rest []*Task
	for _, t := range p.Tasks {
		if strings.HasPrefix(t.ID, "write_verification_memo") {
			memos = append(memos, t)
		} else {
			rest = append(rest, t)
		}
	}
	for _, m := range memos {
		m.Dependencies = m.Dependencies[:0]
		for _, t := range rest {
			m.Dependencies = append(m.Dependencies, t.ID)
		}
	}
	p.Tasks = append(rest, memos...)
	p.UpdatedAt = r.stamp()
	if err := pl.save(); err != nil {
		return ids, err
	}
	return ids, nil
}
