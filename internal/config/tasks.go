package config

// TaskPlanning holds orchestrator.coordination's task planning keys
// (internal/kit/tasks acts on them).
type TaskPlanning struct {
	Enabled    bool // enable_agent_task_planning: the planning tools and prompt section
	Filesystem bool // task_planning_filesystem_mode: the plan kept in tasks/plan.json of the workspace
	// MaxTasks is max_tasks_per_plan (0: unset, the default 10 applies).
	// Upstream parses it and never reads it; massgen enforces it.
	MaxTasks int
}

// taskPlanning reads one task planning key of orchestrator.coordination.
func (d *decoder) taskPlanning(tp *TaskPlanning, t *pair, key string) {
	switch t.key {
	case "enable_agent_task_planning":
		tp.Enabled, _ = d.boolean(key, t)
	case "task_planning_filesystem_mode":
		tp.Filesystem, _ = d.boolean(key, t)
	case "max_tasks_per_plan":
		n, ok := d.integer(key, t, "a positive integer")
		if !ok {
			return
		}
		if n < 1 {
			d.fail(t.val.pos, key, "max_tasks_per_plan must be 1 or more", "")
			return
		}
		tp.MaxTasks = n
	}
}
