package agent

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/coord"
)

// ChecklistExtras are the parts of the checklist-gated prompt past the
// criteria (ChecklistSection): draft_approach and its impact floors, and —
// when the report gate is on and the agent has a workspace to write it in
// — the diagnostic report, a section per criterion, as upstream's
// _build_checklist_gated_decision asks for it.
func ChecklistExtras(ck *coord.Checklist, hasWorkspace bool) string {
	var b strings.Builder
	b.WriteString("\n\n<checklist_iteration>\nWhen the verdict is iterate, answer two questions before proposing: what would a great answer " +
		"look like, and how far are the current answers from it? Then call draft_approach: `improvements` maps each failing criterion " +
		"(E…) to a list of {plan, sources, impact} entries (sources: the answer labels to draw from, or \"fresh\"; impact: transformative, " +
		"structural or incremental), `preserve` maps criteria to {what, source} strengths that must not regress (required unless every " +
		"source is fresh), `vision` says what great looks like. ")
	b.WriteString(impactLine(ck.Floors()))
	b.WriteString(" With task planning on, the draft becomes your task plan (get_task_plan); carry it out, verify, then call new_answer.\n</checklist_iteration>")
	if !ck.Report || !hasWorkspace {
		return b.String()
	}
	fmt.Fprintf(&b, "\n\n<diagnostic_report required=\"true\">\nBefore scoring, write `%s` in your workspace. For each criterion, "+
		"evaluate the existing answer(s) critically through that lens. Be specific — name concrete gaps, not abstract concerns. "+
		"Cover Failure Patterns, Root Causes and Goal Alignment:\n", coord.DefaultReportPath)
	for i, c := range ck.CriteriaOf() {
		fmt.Fprintf(&b, "## %s: %s\n", coord.CriterionID(i), firstSentence(c.Text))
	}
	fmt.Fprintf(&b, "Pass the file path via report_path when calling submit_checklist (%s is read when you give none). Your scores "+
		"MUST be consistent with this report: if your analysis of a criterion finds significant gaps but you score it 8+, lower the score. "+
		"A submission without a report of at least %d characters is refused.\n</diagnostic_report>", coord.DefaultReportPath, coord.ReportMinChars)
	return b.String()
}

// impactLine is upstream's _build_impact_requirement.
func impactLine(f coord.Improvements) string {
	var cs []string
	plural := func(n int, what string) string {
		if n == 1 {
			return fmt.Sprintf("at least %d %s improvement", n, what)
		}
		return fmt.Sprintf("at least %d %s improvements", n, what)
	}
	if f.Transformative > 0 {
		cs = append(cs, plural(f.Transformative, "transformative"))
	}
	if f.Structural > 0 {
		cs = append(cs, plural(f.Structural, "structural"))
	}
	if f.NonIncremental > 0 && f.Transformative+f.Structural < f.NonIncremental {
		cs = append(cs, plural(f.NonIncremental, "structural or transformative")+" combined")
	}
	if len(cs) == 0 {
		return "`impact` is informational for this run: no level is enforced."
	}
	req := strings.Join(cs, "; ")
	return "Impact requirement: " + strings.ToUpper(req[:1]) + req[1:] + ". All-incremental proposals will be rejected — a round at this cost needs bolder changes."
}

// firstSentence is a criterion's name: its text up to the first colon or
// period, for a report heading.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ":."); i > 0 && i < 80 {
		return s[:i]
	}
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
