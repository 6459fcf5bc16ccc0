// Package tasks is v0.1.73's agent task planning
// (orchestrator.coordination.enable_agent_task_planning): each agent keeps
// a plan of tasks with dependencies, priorities and verification criteria
// through nine tools — create_task_plan, add_task, update_task_status,
// edit_task, get_task_plan, get_ready_tasks, get_blocked_tasks,
// delete_task, clear_task_plan — with upstream's argument names and result
// shapes, so upstream's prompts and skills work unchanged.
//
// Plan holds the rules (ids, dependencies on known and earlier tasks, no
// cycles, the status flow pending → in_progress → completed → verified,
// max_tasks_per_plan); Planner is one agent's plan behind the tools, kept
// in memory and, in filesystem mode (task_planning_filesystem_mode), in
// tasks/plan.json of the agent's workspace, written only through the
// agent's Guard (the Files it is given); Reset clears it when the agent
// starts a new round, as upstream clears it before a restart; Section is
// the prompt section.
//
// Differences from upstream, each on purpose: the tools are the agent's
// own tools named as the prompt names them (upstream serves them from a
// per-agent MCP server, mcp__planning_<token>__create_task_plan);
// max_tasks_per_plan is enforced on the agent's own tasks (upstream parses
// it and never reads it); a 0-based index in depends_on counts the agent's
// own tasks (upstream counts the preparation tasks it prepends, so [0]
// named prep_memory with memory on); priority is checked in
// create_task_plan too; a failed call is an error result.
//
// It imports llm and tool (the Tool seam) and nothing above them.
package tasks
