package llmsim

import (
	"fmt"
	"slices"
	"strings"
)

// The default policy under checklist-gated voting's report gate: a gated
// agent whose prompt asks for a diagnostic report writes one with its
// write_file tool before it scores (a tool step), and names it in
// submit_checklist's report_path, as a model following massgen's prompt
// does.

// reportPath is where massgen's prompt asks for the diagnostic report.
const reportPath = "tasks/diagnostic_report.md"

// wantsReport reports whether the prompt asks for a diagnostic report and
// the agent can write one.
func (r *request) wantsReport() bool {
	if !r.offers("write_file") {
		return false
	}
	for _, m := range r.messages {
		if m.Role == "system" && strings.Contains(m.Content, reportPath) {
			return true
		}
	}
	return false
}

// reported reports whether this turn has written the report already.
func (r *request) reported() bool {
	for _, m := range r.messages {
		for _, c := range m.ToolCalls {
			if strings.HasSuffix(c, "write_file") {
				return true
			}
		}
	}
	return false
}

// reportCall writes the diagnostic report: a section per criterion the
// prompt lists.
func (r *request) reportCall() toolCall {
	var b strings.Builder
	b.WriteString("# Diagnostic report (simulated)\n\n")
	for _, id := range r.criteria() {
		fmt.Fprintf(&b, "## %s\nFailure patterns: none found in the answers shown. Root causes: none. Goal alignment: the answers meet %s.\n\n", id, id)
	}
	return toolCall{r.nameOf("write_file"), mustJSON(map[string]string{"path": reportPath, "content": b.String()})}
}

// criteria are the criterion ids the prompt lists (E1 when it lists none).
func (r *request) criteria() []string {
	ids := []string{}
	for _, m := range r.messages {
		for _, g := range criterionLine().FindAllStringSubmatch(m.Content, -1) {
			if !slices.Contains(ids, g[1]) {
				ids = append(ids, g[1])
			}
		}
	}
	if len(ids) == 0 {
		ids = []string{"E1"}
	}
	return ids
}
