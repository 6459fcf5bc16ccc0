package agent

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// sensitivity texts follow MassGen's voting_sensitivity levels: how good the
// best answer must be before an agent votes instead of writing a new one.
var sensitivity = map[string]string{
	"lenient": "If the best current answer already handles the original message well, vote for it instead of writing a new answer.",
	"balanced": "Check whether the best current answer is comprehensive, accurate and complete, and whether it could be meaningfully improved. " +
		"Vote only if it is strong and has no important gaps.",
	"strict": "Check every aspect and edge case of the best current answer: accuracy, justification, completeness and quality of references. " +
		"Vote only if it is excellent; otherwise improve it.",
}

// SystemPrompt builds the coordination system prompt from prioritised
// sections, in MassGen's shape: the agent's own identity first, then the
// coordination rules.
func SystemPrompt(systemMessage, votingSensitivity, novelty string, now time.Time) string {
	var b strings.Builder
	b.WriteString("<system_prompt>\n")
	if s := strings.TrimSpace(systemMessage); s != "" {
		fmt.Fprintf(&b, "<agent_identity priority=\"critical\">\n%s\n</agent_identity>\n\n", s)
	}
	b.WriteString("<massgen_coordination priority=\"critical\">\n")
	b.WriteString("You are one of several agents working on the same task. Each agent may use different models and tools. " +
		"You see the other agents' current answers under anonymous ids (agent1, agent2, …) and decide what to do next.\n\n")
	b.WriteString(cmp.Or(sensitivity[votingSensitivity], sensitivity["lenient"]))
	b.WriteString("\nOtherwise, combine the strengths of the existing answers, fix their weaknesses and call `new_answer` with your complete improved answer.\n")
	switch novelty {
	case "balanced":
		b.WriteString("A new answer must differ meaningfully from the existing ones; near-copies are rejected.\n")
	case "strict":
		b.WriteString("A new answer must differ substantially from the existing ones; anything close to an existing answer is rejected.\n")
	}
	b.WriteString("\nEnd every response by actually calling exactly one tool: `vote` (only when answers exist) or `new_answer`. " +
		"Never ask the user for clarification.\n")
	fmt.Fprintf(&b, "Current date and time: %s\n", now.Format("2006-01-02 15:04 MST"))
	b.WriteString("</massgen_coordination>\n</system_prompt>")
	return b.String()
}

// UserMessage is the coordination user message: the task, any feedback from
// a previous orchestration attempt, and the current answers.
func UserMessage(task, feedback string, answers []coord.Answer) string {
	var b strings.Builder
	if feedback != "" {
		b.WriteString(feedback + "\n\n")
	}
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE> %s <END OF ORIGINAL MESSAGE>\n\n", task)
	b.WriteString("<CURRENT ANSWERS from the agents>\n")
	if len(answers) == 0 {
		b.WriteString("(no answers available yet)\n")
	}
	for _, a := range answers {
		fmt.Fprintf(&b, "<%s> %s <end of %s>\n", a.Label, a.Content, a.Label)
	}
	b.WriteString("<END OF CURRENT ANSWERS>")
	return b.String()
}

// HistoryBlock shows the earlier turns of a conversation (multi-turn use,
// e.g. through the HTTP API) before the current message. Empty without history.
func HistoryBlock(history []llm.Message) string {
	var b strings.Builder
	for _, m := range history {
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "User: %s\n", m.Content)
		case llm.RoleAssistant:
			fmt.Fprintf(&b, "Assistant: %s\n", m.Content)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "<CONVERSATION_HISTORY>\n" + b.String() + "<END OF CONVERSATION_HISTORY>\n\n"
}

// ToolsSection tells coordinating agents about the tools the user's
// application can run. Only the final presenter can call them; during
// coordination an answer should say which call to make and why.
func ToolsSection(tools []llm.ToolDef) string {
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n<client_tools priority=\"high\">\nThe user's application can run these tools for the final answer. " +
		"You cannot call them now; if the answer needs one, say which call to make with which arguments, and the final presenter will make it:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Description)
	}
	b.WriteString("</client_tools>")
	return b.String()
}

// UpdateMessage tells an agent in mid-turn that the answers changed
// (restart_policy: inject). It repeats the whole current set, with the same
// labels as the vote tool, so the agent never reasons about a stale view.
func UpdateMessage(answers []coord.Answer) string {
	var b strings.Builder
	b.WriteString("UPDATE: the answers changed while you were working. Your earlier view is out of date; these are the current answers:\n")
	b.WriteString("<CURRENT ANSWERS from the agents>\n")
	for _, a := range answers {
		fmt.Fprintf(&b, "<%s> %s <end of %s>\n", a.Label, a.Content, a.Label)
	}
	b.WriteString("<END OF CURRENT ANSWERS>\nContinue: build on them with `new_answer`, or `vote` for the best one.")
	return b.String()
}

// FeedbackBlock is shown to every agent on a restarted orchestration attempt.
func FeedbackBlock(reason, instructions, previous string) string {
	return fmt.Sprintf("PREVIOUS ATTEMPT FEEDBACK\nThe previous attempt's final answer was rejected.\nReason: %s\nInstructions: %s\n"+
		"Previous final answer (for reference):\n%s\nEND OF PREVIOUS ATTEMPT FEEDBACK", reason, instructions, previous)
}

// instructionsHeader is the user's system message (agent_config's
// system_message) as a presenter's prompt starts with it, or "" when there
// is none.
func instructionsHeader(systemMessage string) string {
	if m := strings.TrimSpace(systemMessage); m != "" {
		return "## Instructions\n" + m + "\n\n"
	}
	return ""
}

// PresentationSystem is the winner's system prompt for the final answer.
func PresentationSystem(systemMessage string) string {
	return instructionsHeader(systemMessage) + "You were selected by the other agents as the winning presenter. " +
		"Present the best final answer to the original message, combining the strengths of every participant's answer. " +
		"Write the answer itself, addressed to the user; do not describe the coordination."
}

// PresentationUser is the winner's user message: the task, the vote results
// and every answer under its real id, the winner's own marked.
func PresentationUser(task, winner, voteSummary string, answers []coord.Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE> %s <END OF ORIGINAL MESSAGE>\n\nVOTING RESULTS:\n%s\n\nAll answers provided during coordination:\n", task, voteSummary)
	for _, a := range answers {
		mark := ""
		if a.Agent == winner {
			mark = " (YOUR ANSWER)"
		}
		fmt.Fprintf(&b, "%s%s: %q\n", a.Agent, mark, a.Content)
	}
	b.WriteString("\nBased on the coordination above, give your final answer to the original message.")
	return b.String()
}

// checklistSection is the evaluation checklist section: how the gate
// works (how), then the criteria, each with its category's tag.
func checklistSection(how string, criteria []coord.Criterion) string {
	var b strings.Builder
	b.WriteString("\n\n<evaluation_checklist priority=\"critical\">\n")
	b.WriteString(how)
	for i, c := range criteria {
		tag := ""
		switch coord.NormalCategory(c.Category) {
		case coord.CatPrimary:
			tag = " [PRIMARY]"
		case coord.CatStretch:
			tag = " [STRETCH: nice to have]"
		}
		fmt.Fprintf(&b, "%s%s: %s ___/10\n", coord.CriterionID(i), tag, c.Text)
	}
	b.WriteString("</evaluation_checklist>")
	return b.String()
}

// PostEvalUser asks the winner to check the final answer.
func PostEvalUser(task, final string) string {
	return fmt.Sprintf("<ORIGINAL MESSAGE> %s <END OF ORIGINAL MESSAGE>\n\nFINAL ANSWER TO EVALUATE:\n%s\n\n"+
		"Post-Presentation Evaluation: verify that this final answer fully and correctly addresses the original message. "+
		"Call `submit` with confirmed=true if it does, or `restart_orchestration` with the reason and concrete instructions if it does not.", task, final)
}

// ChecklistSection tells a checklist-gated agent its evaluation criteria
// and how the gate works (voting_sensitivity: checklist_gated). The bar
// itself (voting_threshold) stays hidden, as upstream keeps it: the agent
// scores honestly and the coordinator decides.
func ChecklistSection(criteria []coord.Criterion) string {
	return checklistSection("Your votes are checklist-gated. Round 1, before you have an answer of your own: build the best first "+
		"version you can, check it, and submit it with new_answer. From then on, before you vote or give a new answer:\n"+
		"1. Compare all current answers: what each one has that the others lack. Gather concrete evidence.\n"+
		"2. Score every answer (by its label) on every criterion below, 0-10 with a short reason, and call submit_checklist.\n"+
		"3. Obey its verdict. Vote: call vote for the answer it names. Iterate: say what a great answer would look like, call "+
		"draft_approach with your plan for each failing criterion, then build it and call new_answer with an answer that fixes the "+
		"failing criteria (existing answers are material, not a base to patch).\n"+
		"A vote or new_answer that goes against the verdict is refused. Criteria:\n", criteria)
}
