package coord

// Code generated from upstream MassGen v0.1.73's evaluation_criteria_generator.py
// (_CRITERIA_PRESETS and _CHANGEDOC_CRITERIA: each criterion's text and
// category; its anti-patterns, score anchors and verify_by are not carried).
// Do not edit by hand.

// CriteriaPresets are checklist_criteria_preset's criteria sets
// (--checklist-criteria-preset), by name.
var CriteriaPresets = map[string][]Criterion{
	"analysis": {
		{Text: "The analysis identifies concrete, specific findings — not vague observations. Each finding points to a specific location, pattern, or data point in the source material. 'Performance could be improved' is not a finding; 'agent 3 exceeded the tool-call budget on 4 of 7 runs due to retry loops in the search tool' is."},
		{Text: "Findings are supported by evidence from the actual data, not inferred from assumptions about what \"usually\" happens. Claims include references to specific log entries, metrics, or examples. The analysis distinguishes what the data shows from what the analyst infers."},
		{Text: "The analysis distinguishes symptoms from root causes and traces the causal chain. \"Agent 2 was slow\" is a symptom; \"agent 2 hit rate limits due to tool call volume from retry loops in the search tool\" is a root cause. Surface-level observations without causal investigation waste the reader's time.", Category: "primary"},
		{Text: "Actionable recommendations follow from findings. Each significant finding includes a concrete suggestion for what to change — specific enough that someone could implement it without further investigation."},
		{Text: "The analysis surfaces patterns and structural issues across the dataset, not just individual anomalies reported chronologically. Individual events are connected into themes — recurring behaviors, systematic biases, or architectural issues that explain multiple observations at once."},
	},
	"decomposition": {
		{Text: "Subtasks are collectively exhaustive — completing all of them fully produces the complete output with nothing falling through the cracks. The seams between subtasks are where work gets lost: integration steps, cross-cutting concerns (error handling, styling, testing), and the 'glue' that connects independently-built parts must be explicitly assigned.", Category: "primary"},
		{Text: "Subtasks are loosely coupled — each can be executed independently without blocking on intermediate results from other subtasks. Where dependencies exist, they are explicit with specified interfaces, not discovered at execution time when an agent realizes they need something from a peer."},
		{Text: "Subtask scoping is balanced — no subtask is trivially small while another carries the bulk of the real complexity. Imbalanced decomposition wastes agents on trivial work while bottlenecking on the one subtask that contains everything hard."},
		{Text: "Each subtask description is self-contained — an agent can read it and know exactly what to produce, what quality means for this piece, and where the boundaries are, without reading other subtask descriptions or the original prompt. Ambiguous terms are defined, not assumed."},
		{Text: "The decomposition strategy exploits the task's natural structure — creative tasks split along conceptual or thematic boundaries, technical tasks along component or service boundaries, analytical tasks along dimension boundaries. The decomposition reveals insight about the task, not just a mechanical split."},
	},
	"evaluation": {
		{Text: "Each criterion is specific to the actual task — not generic advice that applies to any output. A criterion that could be copy-pasted to an unrelated task is too vague."},
		{Text: "Criteria are evaluable — an agent can determine pass/fail by examining the output, not by making subjective judgments about intent. \"Addresses edge cases\" is vague; \"handles empty input, null values, and boundary conditions\" is evaluable."},
		{Text: "Criteria push on dimensions where the model is weakest by default, not where it is already competent. Models already produce structurally correct, functional output by default — criteria that only check for correctness or completeness will pass on the first draft and add no iterative value. At least one criterion must target a dimension where default model output is predictably mediocre: originality, distinctive voice, visual identity, architectural elegance, or domain-specific depth. The PRIMARY criterion should be the one the model needs to hear most.", Category: "primary"},
		{Text: "Each criterion takes a position and names anti-patterns — it defines what good looks like AND what bad looks like for this specific task. A criterion that says \"uses vivid imagery\" is a dimension label; one that says \"uses imagery that surprises — stock metaphors score poorly\" is a quality definition. Every criterion should include concrete anti-patterns that identify how this task type typically goes wrong."},
		{Text: "Criteria do not conflict with each other or create impossible trade-offs. Meeting one criterion should not require violating another. Where genuine tensions exist, the criteria acknowledge the trade-off explicitly and indicate which side to favor."},
	},
	"persona": {
		{Text: "Each persona articulates a clear, specific perspective that would lead to meaningfully different outputs — not just surface variation in tone or vocabulary. Two personas that would produce essentially the same answer are a failure."},
		{Text: "Personas are grounded in the task's actual decision space — each perspective maps to a real trade-off, methodology, or value judgment the task demands. A persona whose lens does not change any concrete decision in the output is decorative, not functional."},
		{Text: "Personas are actionable instructions, not character descriptions. An agent receiving this persona knows exactly how it changes their approach, priorities, and decision-making — which trade-offs to favor, which approaches to prefer, what to optimize for."},
		{Text: "The persona set collectively covers the task's decision space — the major reasonable approaches, value trade-offs, or methodological choices are represented. An expert reviewing the set would not say 'you're missing the obvious perspective that would...'"},
		{Text: "Personas are vivid enough to resist homogenization under peer pressure. The perspective is strongly stated so that even after seeing other agents' answers, the core viewpoint remains distinguishable. Weak personas wash out after one round of collaboration.", Category: "primary"},
	},
	"planning": {
		{Text: "The plan is structurally sound: it captures the user's outcome and constraints without scope drift, the task graph has valid dependencies and coherent ordering, and sequencing demonstrates risk management — high-risk or foundational tasks come first, quality gates are placed where they most reduce rework."},
		{Text: "Tasks describe both what to produce AND how to approach it — the method, key decisions, and constraints that guide execution. 'Create the hero section' is insufficient; 'restructure the hero section: move value proposition above the fold, use existing brand palette, add a single prominent CTA' tells the executor what to actually do."},
		{Text: "Each task has verification guidance matched to its type. Verification may be deterministic (run tests, validate responses, check file structure) or qualitative (render and assess visual quality, evaluate tone). Plans must NOT force numeric thresholds on inherently qualitative work — 'visually inspect the rendered page for layout balance' is valid verification."},
		{Text: "Technology and tooling choices are explicit — frameworks, libraries, APIs, and tools are named. Where tasks connect or produce artifacts consumed by other tasks, interface contracts are specified: data shapes, file conventions, API signatures, or shared types."},
		{Text: "The plan demonstrates strategic depth — major decisions (architecture, creative direction, structure, approach) are deliberate and justified with rationale tied to the actual problem context, not just 'best practice' or 'modern trend.' If the project name could be swapped out and the plan reused unchanged, it lacks the specificity that produces excellent results.", Category: "primary"},
		{Text: "Iterations prefer tightening existing tasks over adding new ones. New tasks are justified when filling genuine gaps, but unjustified growth indicates sprawl. Descriptions, verification, and dependencies should improve in precision across rounds."},
		{Text: "Tasks are classified as deterministic or exploratory with appropriate specification depth. Deterministic tasks have exact steps and interface contracts. Exploratory tasks have success criteria and constraints instead of implementation steps, giving the executor freedom to iterate. The plan includes evaluation checkpoints after exploratory chunks."},
	},
	"prompt": {
		{Text: "The prompt achieves its functional goal — an agent receiving this prompt cold, with no prior context, would produce the intended type of output without needing to ask clarifying questions. The prompt contains enough context that a capable model can start working immediately."},
		{Text: "The prompt scopes the output precisely — it constrains enough to prevent unhelpful variations while leaving room for quality approaches. Scope failures go both ways: prompts so open that 10 agents produce 10 different output types, and prompts so rigid that they eliminate the best solutions."},
		{Text: "Critical requirements are explicit and prominent, not implied or buried. The prompt does not depend on shared context, cultural assumptions, or 'obvious' intentions. Requirements that would make the user say 'I assumed you'd know that' are exactly the ones that must be stated."},
		{Text: "The prompt is structured for parseability — key instructions are prominent, not buried in paragraphs. An agent skimming the prompt would still catch the critical constraints. Visual hierarchy (headings, bullets, emphasis) reflects importance hierarchy."},
		{Text: "The prompt anticipates how the model will predictably fail on this task type and includes explicit guardrails. Every task type has known failure modes — analysis prompts that get summarization instead, creative prompts that get generic safe output, code prompts that get working-but-naive implementations. A good prompt inoculates against these.", Category: "primary"},
	},
	"round_evaluator": {
		{Text: "The evaluator packet fully follows the round_evaluator contract. Required sections are present, the output stays critique-only, and it does not drift into checklist payload drafting, parent workflow tool instructions, or terminal outcome recommendations."},
		{Text: "criteria_interpretation is rigorous for every active criterion. It explains what the criterion truly demands, what excellent work would look like, and which false positives or shallow passes might otherwise slip through."},
		{Text: "criterion_findings are evidence-grounded and criterion-specific. They cite concrete details from the candidate answers, identify hidden risks, and clearly separate weak spots from source-answer strengths worth carrying forward.", Category: "primary"},
		{Text: "cross_answer_synthesis and preserve guidance are decisive and lossless. The packet makes clear which answer is strongest on which dimension, what no answer gets right yet, and what strengths must not regress in the next revision."},
		{Text: "improvement_spec is actionable, prioritized, and concrete enough that the parent can implement it with minimal reinterpretation. It describes what to change and how to change it, not just restates the problem."},
		{Text: "verification_plan and evidence_gaps name what still needs to be checked, what evidence is missing, and how to close those gaps — not generic 'test more' guidance but specific checks tied to identified risks."},
		{Text: "unexplored_approaches includes at least one grounded, non-obvious direction that could beat every current answer rather than merely patching the current weaknesses. The approach should be specific enough to act on, not just 'try a different strategy.'"},
	},
	"spec": {
		{Text: "Each requirement describes a single, testable behavior or property with enough precision that a developer can implement without guessing intent. Requirements that leave room for interpretation on critical details produce implementations that miss the mark."},
		{Text: "Each requirement has concrete acceptance criteria: specific conditions, inputs, expected outputs, or observable behaviors that prove the requirement is met. 'Works correctly' is not acceptance criteria; 'given input X, produces output Y within Z ms' is."},
		{Text: "Scope boundaries are explicit — what is in scope and what is deliberately out of scope are both stated. The spec does not silently omit aspects the user would expect to be covered. Unstated boundaries cause scope creep during implementation."},
		{Text: "Requirements are prioritized and internally consistent — the ordering reflects genuine implementation dependencies and user-facing importance. No two requirements contradict each other or create impossible trade-offs without explicit acknowledgment."},
		{Text: "The spec demonstrates strategic depth — the chosen design direction, system architecture, and interaction model are deliberate and justified with rationale tied to the actual problem context and users. If the project name could be swapped out and the spec reused unchanged, it lacks the specificity that produces excellent results.", Category: "primary"},
		{Text: "Requirements anticipate edge cases, error states, and boundary conditions relevant to the domain. The spec covers not just the happy path but the realistic failure modes and unusual inputs that will occur in practice."},
	},
}

// ChangedocCriteria are the fallback criteria when the changedoc is on
// (enable_changedoc, upstream's default) and nothing else names criteria.
var ChangedocCriteria = []Criterion{
	{Text: "Spec fidelity: The output implements what the changedoc specifies — each goal and requirement is addressed as described, not approximated or reinterpreted. Missing goals, partially implemented requirements, or creative substitutions for what was specified count as failures."},
	{Text: "Multi-level correctness: The output works correctly as experienced, not just as inspected. Structural correctness (valid format, runnable code, proper syntax), content correctness (accurate information, right computations), and experiential correctness (renders properly, interactions work, no visual defects) are all required. A deliverable that passes structural checks but fails experientially is wrong, not merely unpolished."},
	{Text: "Per-part depth: Every significant component independently meets a quality bar — no section is filler, placeholder, or carried by the strength of others. Evaluate the weakest part, not the average. A brilliant first section with thin remaining sections, or strong core logic with stub supporting pieces, fails this criterion.", Category: "primary"},
	{Text: "Intentional craft: The output reads as authored, not generated — structural choices, style decisions, and domain-specific details reflect judgment that went beyond the first adequate option. Structure, style, and detail reflect care about the result. A knowledgeable person in the domain would recognize thoughtful choices, not template-filling."},
}
