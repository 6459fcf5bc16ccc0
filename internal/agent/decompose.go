package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// The prompts of decomposition mode (coordination_mode: decomposition):
// each agent owns a subtask, sees its peers' subtasks and work, shares its
// own with new_answer and calls stop when it is done; the presenter
// assembles the deliverable from every agent's work. The texts follow
// upstream v0.1.73's DecompositionSection and presentation message.

// DecompositionSystemPrompt is an agent's system prompt in decomposition
// mode: its identity, its subtask, the others' subtasks, the rules.
func DecompositionSystemPrompt(systemMessage, subtask string, others []string, now time.Time) string {
	var b strings.Builder
	b.WriteString("<system_prompt>\n")
	if s := strings.TrimSpace(systemMessage); s != "" {
		fmt.Fprintf(&b, "<agent_identity priority=\"critical\">\n%s\n</agent_identity>\n\n", s)
	}
	b.WriteString("<massgen_coordination priority=\"critical\">\n")
	b.WriteString("You are working as part of a decomposed team. Each agent owns a specific subtask of a larger project.\n")
	if s := strings.TrimSpace(subtask); s != "" {
		fmt.Fprintf(&b, "\n**YOUR ASSIGNED SUBTASK:**\n%s\n", s)
	}
	if len(others) > 0 {
		b.WriteString("\n**THE OTHER AGENTS' SUBTASKS:**\n")
		for _, o := range others {
			fmt.Fprintf(&b, "- %s\n", o)
		}
	}
	b.WriteString(`
**CRITICAL: OWNERSHIP-FIRST EXECUTION.**
You own one primary subtask. Keep roughly 80% of your effort on that scope.
Use up to roughly 20% for adjacent integration work only when needed (interfaces, contracts, shared styles/tests, wiring).
Do NOT take over unrelated domains owned by other agents.
There may be overlap near your boundaries; you may refine/integrate that overlap, but do NOT expand into unrelated subtasks.

**HOW DECOMPOSITION MODE WORKS:**
1. **Self-refinement**: Continue improving your own work across iterations. Submit ` + "`new_answer`" + ` whenever you have meaningful improvements.
2. **Full awareness**: When you see other agents' work, READ and UNDERSTAND all of it.
3. **Selective integration**: Integrate parts that touch your subtask — adapt interfaces, align contracts, resolve conflicts. For parts outside your area, maintain awareness but don't redo their work.
4. **Quality bar for ` + "`new_answer`" + `**: include concrete deliverables in your scope, validation evidence (tests/checks/manual verification), and boundary integration notes.
5. **Completion**: Call ` + "`stop`" + ` when you have reviewed the current state of work (yours and others') and are satisfied that your subtask is done. This ends your execution for this round.

**CHOOSING THE RIGHT TOOL — ` + "`new_answer` vs `stop`" + `:**
Both are terminal actions that end your round. Choose based on whether you produced new work:
- ` + "`new_answer`" + `: You did work this round — wrote code, updated files, made improvements. Use this to **share your work** with other agents and the presenter.
- ` + "`stop`" + `: You reviewed everything and are satisfied — no further changes needed from you. This signals completion without sharing new work.

**TOOLS:**
- ` + "`new_answer`" + `: Submit your work (content = summary of what you did + key deliverables: where files are, how to use them, integration points; not full code listings)
- ` + "`stop`" + `: Signal you are satisfied and done (summary = what you accomplished and how it connects; status = "complete" or "blocked")

End every response by actually calling exactly one tool: ` + "`new_answer` or `stop`" + `. Never ask the user for clarification.
`)
	fmt.Fprintf(&b, "Current date and time: %s\n", now.Format("2006-01-02 15:04 MST"))
	b.WriteString("</massgen_coordination>\n</system_prompt>")
	return b.String()
}

// DecompositionUserMessage is a decomposition turn's user message: the
// agent's subtask (as upstream wraps the message), the task, any feedback
// of an earlier attempt, and every agent's current work with its subtask.
func DecompositionUserMessage(task, subtask, feedback string, answers []coord.Answer, subtasks map[string]string) string {
	var b strings.Builder
	if s := strings.TrimSpace(subtask); s != "" {
		fmt.Fprintf(&b, "[YOUR ASSIGNED SUBTASK: %s]\nUse ownership-first execution: keep most effort on your assigned subtask, "+
			"and only do adjacent cross-scope work for integration boundaries (interfaces/contracts/shared styles/tests). "+
			"There may be overlap with other agents' existing work in your area; you may refine/integrate that overlap, "+
			"but do NOT implement unrelated parts.\n\n", s)
	}
	if feedback != "" {
		b.WriteString(feedback + "\n\n")
	}
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE> %s <END OF ORIGINAL MESSAGE>\n\n", task)
	b.WriteString(workBlock(answers, subtasks))
	return b.String()
}

// workBlock shows every agent's current work under its label, with its
// subtask.
func workBlock(answers []coord.Answer, subtasks map[string]string) string {
	var b strings.Builder
	b.WriteString("<CURRENT WORK from the agents>\n")
	if len(answers) == 0 {
		b.WriteString("(no work shared yet)\n")
	}
	for _, a := range answers {
		sub := ""
		if s := strings.TrimSpace(subtasks[a.Agent]); s != "" {
			sub = fmt.Sprintf(" (subtask: %s)", s)
		}
		fmt.Fprintf(&b, "<%s>%s %s <end of %s>\n", a.Label, sub, a.Content, a.Label)
	}
	b.WriteString("<END OF CURRENT WORK>")
	return b.String()
}

// DecompositionUpdateMessage tells an agent in mid-turn that another agent
// shared work (restart_policy: inject), with upstream's recommended
// actions.
func DecompositionUpdateMessage(answers []coord.Answer, subtasks map[string]string) string {
	return "UPDATE: ANOTHER AGENT SUBMITTED WORK\n" + workBlock(answers, subtasks) + `
RECOMMENDED ACTIONS:
1. Read and understand their full work — maintain awareness of the entire project state
2. Keep ownership-first: spend most effort on your subtask; touch other areas only for adjacent integration
3. Integrate boundary dependencies (interfaces/contracts/shared assets) without taking over unrelated scopes
4. Continue refining your own work — fix issues, improve quality, incorporate insights
5. If you submit ` + "`new_answer`" + `, include concrete deliverables + validation evidence + integration notes
6. Call ` + "`stop`" + ` only when you've reviewed everything and are satisfied — no new work to share`
}

// DecompositionPresentationSystem is the presenter's system prompt.
func DecompositionPresentationSystem(systemMessage string) string {
	return instructionsHeader(systemMessage) + "You are the presenter of a decomposed team: each agent worked on its own subtask. " +
		"Assemble the final deliverable from the work each agent produced. Write the answer itself, addressed to the user; " +
		"do not describe the coordination."
}

// DecompositionPresentationUser is the presenter's user message: the task
// and, for every agent in config order, its subtask, its stop summary and
// its work (upstream's AGENT WORK SUMMARIES).
func DecompositionPresentationUser(task string, agents []string, answers []coord.Answer, subtasks map[string]string, stops []coord.Vote) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ORIGINAL TASK:\n%s\n\nAGENT WORK SUMMARIES:\n", task)
	for _, id := range agents {
		work := "(no work shared)"
		for _, a := range answers {
			if a.Agent == id {
				work = a.Content
			}
		}
		summary := "No stop summary"
		for _, v := range stops {
			if v.Voter == id && v.Stop != "" {
				summary = fmt.Sprintf("%s (%s)", v.Reason, v.Stop)
			}
		}
		sub := strings.TrimSpace(subtasks[id])
		if sub == "" {
			sub = "No specific subtask assigned"
		}
		fmt.Fprintf(&b, "**%s** (subtask: %s)\nStop summary: %s\nWork: %s\n\n", id, sub, summary, work)
	}
	b.WriteString("Your job is to assemble the final deliverable from the work each agent produced. " +
		"Ensure quality, fill any gaps, resolve conflicts, and answer the original query comprehensively.")
	return b.String()
}

// enforcement is the message for a response without a workflow call.
func (p *play) enforcement() string {
	if p.t.Decomposition {
		return coord.StopEnforcementMessage
	}
	return coord.EnforcementMessage
}

// updateMessage is the message showing a newer answer set mid-turn.
func (p *play) updateMessage() string {
	if p.t.Decomposition {
		return DecompositionUpdateMessage(p.answers, p.t.Subtasks)
	}
	return UpdateMessage(p.answers)
}

// DecompositionChecklistSection is ChecklistSection in decomposition mode
// (voting_sensitivity: checklist_gated): the agent scores only its own
// current work, flat, and the terminate action is stop.
func DecompositionChecklistSection(criteria []coord.Criterion) string {
	return checklistSection("Your stops are checklist-gated. Round 1, before you have shared work: build your subtask's first "+
		"version, check it, and submit it with new_answer. From then on, before you stop or share new work:\n"+
		"1. Read every agent's current work; gather concrete evidence about your own (run it, test it).\n"+
		"2. Score your own current work for your subtask on every criterion below, 0-10 with a short reason, flat: "+
		`{"E1": {"score": 8, "reasoning": "…"}, "E2": …}, and call submit_checklist.`+"\n"+
		"3. Obey its verdict. Stop: call stop. Iterate: call draft_approach with your plan for each failing criterion, "+
		"then build it and call new_answer.\n"+
		"A stop or new_answer that goes against the verdict is refused. Criteria:\n", criteria)
}
