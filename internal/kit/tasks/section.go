package tasks

import "strings"

// Section is the task planning section of an agent's system prompt,
// upstream's TaskPlanningSection without what needs features massgen does
// not offer with it (draft_approach, subagent delegation, checkpoints);
// filesystem adds the note on tasks/plan.json, and fast (fast_iteration_mode)
// asks for a quick final verification pass instead of a comprehensive one.
func Section(filesystem, fast bool) string {
	pass := "comprehensive"
	if fast {
		pass = "quick"
	}
	s := strings.ReplaceAll(section, "{pass}", pass)
	if filesystem {
		s += filesystemNote
	}
	return "\n\n<task_planning>\n" + strings.TrimSpace(s) + "\n</task_planning>\n"
}

const section = `# Task Planning and Management (REQUIRED)

MassGen is built for complex, multi-step tasks. **A task plan is REQUIRED for all substantive
work.** This is not optional guidance — it is the core execution discipline of this system.

**When do you need a task plan?**
Almost always. The only exceptions are purely conversational responses (answering a question
with no execution) or a single atomic operation. If you are writing files, calling tools,
building things, or making improvements — you need a task plan.

- ✅ Create a task plan even for "simple" tasks — you'll discover the work is larger than expected
- ❌ Do NOT start writing files or making changes without first having a task plan
- ❌ Do NOT submit your answer with tasks marked pending or in_progress — address them all

**Tools available:**
- **create_task_plan** - Create a plan with tasks, dependencies, and verification criteria
- **get_ready_tasks** - Get tasks ready to start (dependencies satisfied)
- **get_blocked_tasks** - See what's waiting on dependencies
- **update_task_status** - Mark progress (pending/in_progress/completed/verified)
- **add_task** - Add new tasks (priority: low/medium/high, verification criteria required by default)
- **get_task_plan** - View your complete task plan
- **edit_task** - Update task descriptions
- **delete_task** - Remove tasks no longer needed

**Reading Tool Responses:**
Tool responses may include important reminders and guidance. Always read tool response messages carefully.

Your plan starts empty in every new round: create it again for the work of that round.

---

## STEP 1 — Create Your Task Plan (before any execution)

Brief initial research is fine (reading docs, checking existing code), but create your plan
BEFORE making any changes or writing any files.

Create tasks with verification criteria:
- ` + "`" + `{"id": "research", "description": "Research OAuth providers", "verification": "Comparison table with 3+ providers", "verification_method": "Review output table"}` + "`" + `
- ` + "`" + `{"id": "design", "description": "Design auth flow", "depends_on": ["research"], "verification": "Flow diagram renders correctly", "verification_method": "Screenshot and visual check"}` + "`" + `
- ` + "`" + `{"id": "implement", "description": "Implement endpoints", "depends_on": ["design"], "priority": "high", "execution": {"mode": "inline"}, "verification": "Endpoints return 200", "verification_method": "curl test each endpoint"}` + "`" + `

**Dependency formats:**
- **By index** (0-based): ` + "`" + `{"description": "Task 2", "depends_on": [0]}` + "`" + ` — depends on the first task
- **By ID** (recommended): ` + "`" + `{"id": "api", "description": "Build API", "depends_on": ["auth"]}` + "`" + ` — depends on task with id "auth"

---

## STEP 2 — Execute Every Task. Track Status As You Go.

**For EACH task in your plan:**
1. Call ` + "`" + `update_task_status(status="in_progress")` + "`" + ` when you start it
2. Do the work
3. Call ` + "`" + `update_task_status(status="completed")` + "`" + ` when done
4. Continue to the next task

**Verification is separate from implementation.** Do NOT verify after each individual task.
Instead, verify in logical groups — when a meaningful chunk of related work is done and
it makes sense to check the integrated result. After completing all tasks, do a final {pass}
verification pass.

Mark tasks ` + "`" + `verified` + "`" + ` when you've confirmed they work as part of a verification group.

The flow is:
` + "```" + `
create_task_plan → get_ready_tasks → execute all tasks → verify in groups → submit
` + "```" + `

**Add tasks** as you discover new requirements:
- ` + "`" + `description="Write integration tests", depends_on=["implement"], verification="Tests pass"` + "`" + `

---

## STEP 3 — Include Task Summary in Your Answer

Always include a task execution summary at the end of your ` + "`" + `new_answer` + "`" + `:
1. Each task name
2. Status: ✓ (verified), ◐ (completed but unverified), ✗ (not done / skipped)
3. Brief description of what you did

Example format:
` + "```" + `
[Your main answer content here]

---
**Task Execution Summary:**
✓ Research OAuth providers - Analyzed OAuth 2.0 spec and compared providers
◐ Implement endpoints - Built /auth/login, /auth/callback (unverified: no test run yet)
✗ Write tests - [skip: no test infra available this round]

Status: 1/3 verified, 1/3 completed (unverified), 1/3 not done
` + "```" + `

This helps other agents evaluate your work and continue where you left off.`

const filesystemNote = `

**Filesystem Mode Enabled:**
Your task plans are automatically saved to ` + "`" + `tasks/plan.json` + "`" + ` in your workspace. You can write notes
or comments in ` + "`" + `tasks/notes.md` + "`" + ` or other files in the ` + "`" + `tasks/` + "`" + ` directory.

*NOTE*: You will also have access to other agents' task plans in the shared reference.`
