package llmsim

import "strings"

// Decomposition mode (massgen's coordination_mode: decomposition) offers
// new_answer and stop instead of vote. The default policy shares work
// once, then stops: a turn whose prompt shows no shared work yet answers,
// a later one calls stop, so a simulated decomposed team ends.

// showsWork reports whether the request shows work already shared by the
// team (the decomposition prompt's CURRENT WORK block with an entry).
func (r *request) showsWork() bool {
	for _, m := range r.messages {
		if strings.Contains(m.Content, "<CURRENT WORK from the agents>") && !strings.Contains(m.Content, "(no work shared yet)") {
			return true
		}
	}
	return false
}

// stopCall is the default policy's stop.
func stopCall(req *request) toolCall {
	return toolCall{req.nameOf("stop"), `{"summary":"simulated stop: my subtask is done","status":"complete"}`}
}

// flatScores are the default checklist scores in decomposition mode: the
// agent's own work, flat ({"E1": {"score": 9, …}, …}).
func flatScores(ids []string, reported bool) string {
	scores := map[string]any{}
	for _, id := range ids {
		scores[id] = map[string]any{"score": 9, "reasoning": "simulated: my work meets " + id}
	}
	if reported {
		return mustJSON(map[string]any{"scores": scores, "report_path": reportPath})
	}
	return mustJSON(map[string]any{"scores": scores})
}

// findWork reads every agent's work from a decomposition presenter's
// prompt (massgen's AGENT WORK SUMMARIES: "**id** (subtask: …)\nStop
// summary: …\nWork: …"), joined by blank lines; "" for any other prompt.
func findWork(msg string) string {
	_, rest, ok := strings.Cut(msg, "AGENT WORK SUMMARIES:\n")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "\nYour job is to assemble")
	var parts []string
	for _, block := range strings.Split(rest, "\n\n**") {
		if _, w, ok := strings.Cut(block, "\nWork: "); ok && strings.TrimSpace(w) != "(no work shared)" {
			parts = append(parts, strings.TrimSpace(w))
		}
	}
	return strings.Join(parts, "\n\n")
}
