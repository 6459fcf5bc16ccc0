package planmode

import (
	"fmt"
	"slices"
	"strings"
)

// Depths are --plan-depth's values; Thoroughnesses --plan-thoroughness's.
var (
	Depths         = []string{"dynamic", "shallow", "medium", "deep"}
	Thoroughnesses = []string{"standard", "thorough"}
)

// Options are the planning size controls of --plan.
type Options struct {
	Depth        string // dynamic (default), shallow, medium, deep
	Thoroughness string // standard (default), thorough
	Steps        int    // --plan-steps: a target task count (0: by depth)
	Chunks       int    // --plan-chunks: a target chunk count (0: 1)
}

// Check says what is wrong with o.
func (o Options) Check() error {
	if o.Depth != "" && !slices.Contains(Depths, o.Depth) {
		return fmt.Errorf("--plan-depth takes %s, not %q", strings.Join(Depths, ", "), o.Depth)
	}
	if o.Thoroughness != "" && !slices.Contains(Thoroughnesses, o.Thoroughness) {
		return fmt.Errorf("--plan-thoroughness takes %s, not %q", strings.Join(Thoroughnesses, ", "), o.Thoroughness)
	}
	if o.Steps < 0 || o.Chunks < 0 {
		return fmt.Errorf("--plan-steps and --plan-chunks take a positive number")
	}
	return nil
}

var depthTargets = map[string][2]string{
	"dynamic": {"dynamic based on scope complexity", "scope-adaptive granularity"},
	"shallow": {"5-10", "high-level phases only"},
	"medium":  {"20-50", "sections with tasks"},
	"deep":    {"100-200+", "granular step-by-step"},
}

func chunkLine(chunks int) string {
	if chunks <= 1 {
		return "- Target chunks: 1 (put every task in one chunk, e.g. `C01_main`)"
	}
	return fmt.Sprintf("- Target chunks: around %d (ordered labels C01_…, C02_…)", chunks)
}

// Prefix is what --plan puts before the question: plan, do not build;
// write project_plan.json in upstream's format.
func Prefix(o Options) string {
	depth := o.Depth
	if depth == "" {
		depth = "dynamic"
	}
	t := depthTargets[depth]
	target := "- Target tasks: " + t[0]
	if o.Steps > 0 {
		target = fmt.Sprintf("- Target tasks: around %d", o.Steps)
	}
	thorough := ""
	if o.Thoroughness == "thorough" {
		thorough = "\n## Thoroughness: THOROUGH\n\nPush past the obvious approach. Record your strategic reasoning in `research/` (the problem " +
			"domain and what separates excellent from adequate results), `framework/` (why this approach over the alternatives, " +
			"anti-patterns to avoid) and `risks/` (fragile assumptions and the pivot if they fail), and let it shape every task.\n"
	}
	return `# TASK PLANNING MODE

You are in task planning mode. Your goal is to create a comprehensive task plan.

## CRITICAL: PLANNING ONLY - DO NOT BUILD THE DELIVERABLE

**YOU ARE A PLANNER, NOT AN EXECUTOR.**

- **DO NOT** create the actual deliverable (no final code, no implementations)
- **DO NOT** execute the user's task - only plan it
- **DO** create ` + "`project_plan.json`" + ` listing tasks that a FUTURE agent will execute
- **DO** research and explore to understand the task scope

Supporting documents (research/, framework/, risks/, requirements/) are welcome; they support the plan,
` + "`project_plan.json`" + ` is the plan.

## Output Requirements

Write ` + "`project_plan.json`" + ` in your workspace root with your file tools. Do NOT use the task planning tools
(create_task_plan, update_task_status, …) for it: those track your own work, not the deliverable.

## Planning Principles

- Focus on outcomes: describe WHAT the final product needs; implementation choices happen during execution.
- Verification tests the PRODUCT first (run it, use it, look at it), then the source.
- Each task independently verifiable; dependencies (depends_on) form a DAG and never point to a later chunk.
- Descriptions say WHAT and HOW, specifically enough that an executor needs to ask nothing; where tasks hand
  artifacts to each other, state the contract (data shapes, file names, signatures).
- Classify every task as ` + "`deterministic`" + ` (one correct path, binary verification) or ` + "`exploratory`" + ` (success
  criteria, not a locked-in answer).
` + thorough + `
## Task List Format

` + "```json" + `
{
  "tasks": [
    {
      "id": "F001",
      "chunk": "C01_foundation",
      "task_type": "deterministic|exploratory",
      "description": "Feature Name - What this feature accomplishes and the expected outcome",
      "status": "pending",
      "depends_on": ["F000"],
      "priority": "high|medium|low",
      "success_criteria": ["Only for exploratory tasks: what good looks like"],
      "metadata": {
        "verification": "How to verify this task is complete",
        "verification_method": "Output-first verification approach",
        "verification_group": "optional_group_name"
      }
    }
  ]
}
` + "```" + `

Every task MUST have a non-empty ` + "`chunk`" + `; use ordered chunk labels.

## Planning Size Controls
- Depth mode: ` + strings.ToUpper(depth) + `
` + target + `
` + chunkLine(o.Chunks) + `
- Detail level: ` + t[1] + `

Your answer summarises the plan; the file is what is kept.

---

USER'S REQUEST:
`
}

// SpecPrefix is what --spec puts before the question: write the
// requirements, in EARS notation, in project_spec.json.
func SpecPrefix(chunks int) string {
	return `# SPEC CREATION MODE

You are in spec creation mode. Your goal is a requirements specification for the user's request, not its
implementation.

## CRITICAL: SPECIFY ONLY - DO NOT BUILD THE DELIVERABLE

- **DO NOT** implement anything
- **DO** write ` + "`project_spec.json`" + ` in your workspace root with your file tools
- Each requirement is one EARS statement: "WHEN <trigger> THE SYSTEM SHALL <response>" (or WHILE / IF … THEN /
  WHERE forms, or "THE SYSTEM SHALL …" for ubiquitous ones), testable, with how to verify it

## Spec Format

` + "```json" + `
{
  "requirements": [
    {
      "id": "REQ-001",
      "chunk": "C01_core",
      "title": "Short descriptive title",
      "priority": "P0|P1|P2",
      "type": "functional|non-functional",
      "ears": "WHEN <trigger> THE SYSTEM SHALL <response>",
      "rationale": "Why this requirement exists",
      "verification": "How to verify this requirement is met",
      "depends_on": ["REQ-000"]
    }
  ]
}
` + "```" + `

Every requirement MUST have a non-empty ` + "`chunk`" + `; dependencies never point to a later chunk.
` + chunkLine(chunks) + `

Your answer summarises the spec; the file is what is kept.

---

USER'S REQUEST:
`
}
