package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// Subtasks are decomposition mode's assignments (coordination_mode:
// decomposition, Settings.Decomposition): the subtask: each agent's config
// gives, and whether upstream v0.1.73's task_decomposer writes the missing
// ones before the run.
type Subtasks struct {
	Given map[string]string // by agent id, from the config (agents[].subtask)
	// Decompose is task_decomposer.enabled (upstream's default: true): one
	// call of the first agent before the run assigns a subtask to every
	// agent the config left without one. Guidelines are its
	// decomposition_guidelines, added to that call's prompt.
	Decompose  bool
	Guidelines string
	// Criteria gives each checklist-gated agent upstream's criteria for
	// executing its subtask (coord.SubtaskCriteria) over the team's: the
	// config gave no inline criteria (checklist_criteria_inline,
	// --eval-criteria), which upstream ranks above them.
	Criteria bool
}

// assignSubtasks fixes every agent's subtask before the run
// (fixSubtasks), then, under checklist-gated voting, each agent's
// criteria for its subtask (Subtasks.Criteria).
func (r *runner) assignSubtasks(ctx context.Context) {
	if !r.o.Decomposition {
		return
	}
	r.fixSubtasks(ctx)
	ck := r.m.Settings().Checklist
	if ck == nil || r.o.Subtasks == nil || !r.o.Subtasks.Criteria {
		return
	}
	for _, a := range r.o.Agents {
		if s := r.subtasks[a.ID]; s != "" && ck.Gates(a.ID) {
			r.step(coord.CriteriaSet{Agent: a.ID, Criteria: coord.SubtaskCriteria(s)})
		}
	}
}

// fixSubtasks fixes every agent's subtask: the config's wins; the
// decomposer writes the others (one plain call of the first agent,
// preRunCall); when that call fails or its reply cannot be read, each
// agent without one gets upstream's fallback subtask, and the event log
// says so.
func (r *runner) fixSubtasks(ctx context.Context) {
	ids := make([]string, len(r.o.Agents))
	r.subtasks = map[string]string{}
	var missing []string
	for i, a := range r.o.Agents {
		ids[i] = a.ID
		if r.o.Subtasks != nil {
			if s := strings.TrimSpace(r.o.Subtasks.Given[a.ID]); s != "" {
				r.subtasks[a.ID] = s
				continue
			}
		}
		missing = append(missing, a.ID)
	}
	if len(missing) == 0 || r.o.Subtasks == nil || !r.o.Subtasks.Decompose {
		return
	}
	note := ""
	done := r.preRunCall(ctx, decomposerSystem, decomposerPrompt(r.question, r.o.Agents, r.subtasks, r.o.Subtasks.Guidelines),
		"assigning the agents' subtasks (task_decomposer)")
	var got map[string]string
	if done.Failure != nil {
		note = fmt.Sprintf("the task decomposition failed (%s): using fallback subtasks", done.Failure.Message)
	} else if p, err := ParseSubtasks(done.Text, ids); err != nil {
		note = fmt.Sprintf("the task decomposition was not usable (%v): using fallback subtasks", err)
	} else {
		got = p
	}
	var fell []string
	for i, id := range ids {
		if _, given := r.subtasks[id]; given {
			continue
		}
		if s := got[id]; s != "" {
			r.subtasks[id] = s
			continue
		}
		r.subtasks[id] = fallbackSubtask(i, len(ids), r.byID[id].SystemMessage != "")
		fell = append(fell, id)
	}
	if note == "" && len(fell) > 0 {
		note = fmt.Sprintf("the task decomposition left out %s: fallback subtasks for them", strings.Join(fell, ", "))
	}
	if note != "" {
		r.publish(event.ActionRejected{Agent: r.o.Agents[0].ID, Reason: note})
	}
}

const decomposerSystem = "You split a task into complementary subtasks, one per agent of a team that works on them in parallel. Reply with JSON only."

// decomposerPrompt is upstream v0.1.73's decomposition prompt
// (task_decomposer.py), asking only for the agents given no subtask.
func decomposerPrompt(task string, agents []Agent, given map[string]string, guidelines string) string {
	var desc, schema []string
	for i, a := range agents {
		d := strings.TrimSpace(a.SystemMessage)
		if d == "" {
			d = "General-purpose agent"
		}
		if r := []rune(d); len(r) > 200 {
			d = string(r[:200])
		}
		line := fmt.Sprintf("- agent%d (output key: %s): %s", i+1, a.ID, d)
		if s := given[a.ID]; s != "" {
			line += fmt.Sprintf(" [already assigned: %s]", s)
		} else {
			schema = append(schema, fmt.Sprintf(`%q: {"subtask": "owned scope + integration touchpoints + quality bar", "criteria": [{"text": "criterion text", "category": "standard"}]}`, a.ID))
		}
		desc = append(desc, line)
	}
	g := ""
	if s := strings.TrimSpace(guidelines); s != "" {
		g = "\nDecomposition guidelines: " + s + "\n"
	}
	return fmt.Sprintf(`Create a decomposition plan for %d agents.

Task: %s

Agents and their expertise:
%s
%s
Requirements:
- Assign exactly one subtask to each agent ID that has none yet.
- Keep subtasks complementary and non-overlapping (with each other and with those already assigned).
- Make each subtask concrete and actionable.
- Ensure subtasks are roughly equal in expected effort and completion time.
- Balance depth: each subtask should include implementation work plus quality validation.
- Keep ownership-first boundaries: each agent has one primary scope and only adjacent integration responsibilities.
- Ensure every subtask can start at kickoff in parallel (no hard dependency on another agent finishing first).
- If you reference peers in subtask prose, use anonymous aliases (agent1, agent2, ...) from the list above, not raw IDs.
- Use contract-first phrasing for integration (interfaces/placeholders/stubs), not serial handoff phrasing.
- Write each subtask as 2-3 sentences covering: 1) primary owned scope, 2) integration touchpoints with neighboring scopes, 3) quality bar (tests/checks/accessibility or equivalent).
- Return valid JSON only (no markdown/prose), using this schema:
{"subtasks": {%s}}
`, len(agents), task, strings.Join(desc, "\n"), g, strings.Join(schema, ", "))
}

// ParseSubtasks reads a decomposer's reply as upstream does: the whole
// text, a fenced JSON block, or the outermost braces, holding
// {"subtasks": {id: "text" | {"subtask": "text", …}}} or the map itself.
// Entries of unknown agents are dropped; it is an error when no known
// agent got a subtask.
func ParseSubtasks(text string, ids []string) (map[string]string, error) {
	cands := []string{strings.TrimSpace(text)}
	for _, m := range fenced().FindAllStringSubmatch(text, -1) {
		cands = append(cands, m[1])
	}
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		cands = append(cands, text[i:j+1])
	}
	for _, c := range cands {
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(c), &top) != nil {
			continue
		}
		entries := top
		if raw, ok := top["subtasks"]; ok {
			entries = nil
			if json.Unmarshal(raw, &entries) != nil {
				continue
			}
		}
		out := map[string]string{}
		for _, id := range ids {
			raw, ok := entries[id]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				var obj struct {
					Subtask string `json:"subtask"`
				}
				_ = json.Unmarshal(raw, &obj)
				s = obj.Subtask
			}
			if s = strings.TrimSpace(s); s != "" {
				out[id] = s
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no subtask for any agent (%s) in the reply", strings.Join(ids, ", "))
}

// fallbackSubtask is upstream's fallback for agent i of n: by its
// specialisation when it has a system message, else part i+1 of n.
func fallbackSubtask(i, n int, specialised bool) string {
	const clause = "Start immediately in parallel using contract-first assumptions/stubs for boundaries; do not wait for another agent's deliverable."
	if specialised {
		return "Own one distinct slice of the task aligned with your specialization. Implement that slice end-to-end, " +
			"validate quality with concrete checks, and only touch adjacent interfaces needed for integration. " + clause
	}
	return fmt.Sprintf("Own part %d of %d of this task with implementation depth and quality checks. "+
		"Coordinate on shared boundaries with peers, but avoid taking over unrelated scopes. %s", i+1, n, clause)
}

// coordinationUser is a coordination turn's user message after the
// history: decomposition mode's (the agent's subtask, every agent's work
// with its subtask) or the voting one.
func (r *runner) coordinationUser(c coord.StartTurn) string {
	if !r.o.Decomposition {
		return agent.UserMessage(r.question, r.feedback, c.Answers)
	}
	return agent.DecompositionUserMessage(r.question, r.subtasks[c.Agent], r.feedback, c.Answers, r.subtasks)
}

// decompositionTurn makes task a decomposition turn: its system prompt
// (the agent's subtask and the others'), new_answer and stop for tools.
func (r *runner) decompositionTurn(task *agent.Task, a *Agent) {
	if !r.o.Decomposition {
		return
	}
	var others []string
	for i, o := range r.o.Agents {
		if o.ID != a.ID && r.subtasks[o.ID] != "" {
			others = append(others, fmt.Sprintf("agent %d of %d: %s", i+1, len(r.o.Agents), r.subtasks[o.ID]))
		}
	}
	task.System = agent.DecompositionSystemPrompt(a.SystemMessage, r.subtasks[a.ID], others, r.o.Now()) + agent.ToolsSection(r.o.ClientTools)
	task.Decomposition, task.Subtasks = true, r.subtasks
}

// decompositionPresentation is the presenter's prompts in decomposition
// mode: every agent's subtask, stop summary and work.
func (r *runner) decompositionPresentation(a *Agent, p coord.Present) (system, user string) {
	ids := make([]string, len(r.o.Agents))
	for i, x := range r.o.Agents {
		ids[i] = x.ID
	}
	return agent.DecompositionPresentationSystem(a.SystemMessage),
		agent.HistoryBlock(r.o.History) + agent.DecompositionPresentationUser(r.question, ids, p.Answers, r.subtasks, p.Votes)
}

// voteReason is an accepted vote's reason for its event; a stop (counted
// like a vote for the agent's own work) says so, with its status.
func voteReason(act coord.Action) string {
	if act.Kind == coord.ActStop {
		return fmt.Sprintf("stop (%s): %s", act.Label, act.Reason)
	}
	return act.Reason
}

// agentChecklist is the checklist as agent id sees it: its own criteria
// (decomposition mode's per-subtask ones) as the criteria.
func agentChecklist(ck *coord.Checklist, id string) *coord.Checklist {
	if len(ck.PerAgent[id]) == 0 {
		return ck
	}
	own := *ck
	own.Criteria = ck.CriteriaFor(id)
	return &own
}

// checklistSection is the checklist-gated agent's prompt section: in
// decomposition mode it scores its own work, flat, and stops.
func (r *runner) checklistSection(ck *coord.Checklist) string {
	if r.o.Decomposition {
		return agent.DecompositionChecklistSection(ck.CriteriaOf())
	}
	return agent.ChecklistSection(ck.CriteriaOf())
}

// autoStops are the stops the machine counts right after an accepted
// answer: every vote and stop was cleared by it, so those are the agents
// the coordinator stopped at their answer streak's cap (decomposition
// mode's auto-stop), published like the stops agents make.
func autoStops(m *coord.Machine) []coord.Vote {
	var out []coord.Vote
	for _, v := range m.Votes() {
		if v.Stop != "" {
			out = append(out, v)
		}
	}
	return out
}
