package coord

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// This file holds the rules of decomposition mode (coordination_mode:
// decomposition, MassGen v0.1.73): each agent owns a subtask of the
// question and the team builds the whole together instead of competing.
//
//   - The workflow tools are new_answer and stop; vote is refused. A stop
//     {summary, status: complete|blocked} is counted like a vote for the
//     agent's own work (Vote.Stop says so), so a new answer wakes every
//     stopped agent as it invalidates every vote, and the run's events,
//     status and replay log keep their shape.
//   - The answer cap (max_new_answers_per_agent) counts a streak: the
//     answers an agent gave in a row without seeing a peer's newer answer.
//     A turn that starts with, or is injected, a peer's answer the agent
//     had not seen resets it. An agent at the cap is stopped by the
//     coordinator instead of being started again (upstream's auto-stop).
//   - Coordination ends when every live agent has stopped; the presenter
//     (presenter_agent, or the last agent in config order) then merges
//     every agent's work in the final presentation, seeing each agent's
//     answer and stop summary.

// ToolStop is decomposition mode's terminate action.
const ToolStop = "stop"

// StopEnforcementMessage is EnforcementMessage in decomposition mode.
const StopEnforcementMessage = "You did not call a workflow tool. Finish your work by actually calling exactly one tool: " +
	"`new_answer` to share your work on your subtask, or `stop` when your subtask is done."

// Stop statuses (the stop tool's status argument).
const (
	StopComplete = "complete"
	StopBlocked  = "blocked"
)

// decomposition reports whether the run is in decomposition mode.
func (m *Machine) decomposition() bool { return m.cfg.Decomposition }

// peerAnswers counts the answers agents other than a have given.
func (m *Machine) peerAnswers(a *agent) int {
	n := 0
	for _, o := range m.agents {
		if o != a {
			n += len(o.answers)
		}
	}
	return n
}

// seePeers records that a was shown every current answer: a peer answer
// it had not seen ends its answer streak.
func (m *Machine) seePeers(a *agent) {
	if n := m.peerAnswers(a); n > a.seenPeers {
		a.seenPeers, a.streak = n, 0
	}
}

// streakCapped says why a may not give another answer in decomposition
// mode, or "".
func (m *Machine) streakCapped(a *agent) string {
	if m.cfg.MaxAnswers > 0 && a.streak >= m.cfg.MaxAnswers {
		return fmt.Sprintf("You've reached the maximum of %d consecutive new answer(s) without seeing external updates. "+
			"Please call `stop` to signal you are done.", m.cfg.MaxAnswers)
	}
	return ""
}

// autoStop stops an idle agent whose streak is at the cap instead of
// starting it again (after seePeers: a peer's newer answer lets it go on).
// It reports whether a was stopped.
func (m *Machine) autoStop(a *agent) bool {
	m.seePeers(a)
	if m.globalCapped() != "" && len(a.answers) > 0 {
		m.recordStop(a, fmt.Sprintf("Auto-stopped: reached global answer limit (%d/%d). Last work: %s",
			m.totalAnswers(), m.cfg.MaxAnswersGlobal, lastWork(a)), StopComplete)
		return true
	}
	if m.streakCapped(a) == "" {
		return false
	}
	last := ""
	if n := len(a.answers); n > 0 {
		last = a.answers[n-1]
	}
	if r := []rune(last); len(r) > 200 {
		last = string(r[:200])
	}
	summary := fmt.Sprintf("Auto-stopped: reached per-agent consecutive answer limit (%d/%d). Last work: %s", a.streak, m.cfg.MaxAnswers, last)
	m.recordStop(a, summary, StopComplete)
	return true
}

// recordStop counts a's stop.
func (m *Machine) recordStop(a *agent, summary, status string) {
	label := ""
	for _, x := range m.Answers() {
		if x.Agent == a.id {
			label = x.Label
		}
	}
	a.vote = &Vote{Voter: a.id, Target: a.id, Label: label, Reason: summary, Stop: status}
	a.status = Voted
	a.failures, a.circuitWaits = 0, 0
}

// stopAction judges a stop. act.Reason is the summary, act.Label the
// status.
func (m *Machine) stopAction(a *agent, seen int, act Action) (Verdict, []Command) {
	if !m.decomposition() {
		return Verdict{Outcome: Rejected, Message: "stop is only available in decomposition mode. Call vote for the best existing answer, or new_answer."}, nil
	}
	if len(m.Answers()) == 0 {
		return Verdict{Outcome: Rejected, Message: "Cannot stop yet: no agent has shared any work. Do your subtask and submit it with new_answer first."}, nil
	}
	if seen != m.epoch {
		// Decided on work that has since changed: the agent looks again.
		return Verdict{Outcome: Stale, Message: "another agent shared new work while you decided; stop discarded"}, m.startTurn(a)
	}
	status := strings.ToLower(strings.TrimSpace(act.Label))
	switch status {
	case "":
		status = StopComplete
	case StopComplete, StopBlocked:
	default:
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf("Invalid status %q: call stop with status \"complete\" or \"blocked\".", act.Label)}, nil
	}
	if why := m.gatedIn(a, ActVote); why != "" {
		return Verdict{Outcome: Rejected, Message: why}, nil
	}
	m.recordStop(a, act.Reason, status)
	v := Verdict{Outcome: Accepted, Label: a.vote.Label, Target: a.id}
	if cmds := m.release(); len(cmds) > 0 {
		return v, cmds
	}
	return v, m.checkConsensus("")
}

// presenter is who merges the work: presenter_agent when it names a live
// agent, else the last live agent in config order.
func (m *Machine) presenter() *agent {
	if a, ok := m.byID[m.cfg.Presenter]; ok && a.status != Failed {
		return a
	}
	for i := len(m.agents) - 1; i >= 0; i-- {
		if m.agents[i].status != Failed {
			return m.agents[i]
		}
	}
	return m.agents[len(m.agents)-1]
}

// decideDecomposition names the presenter. Its stored answer (the
// fallback when there is no presentation) is every agent's work, under
// its label, in config order.
func (m *Machine) decideDecomposition(prefix string) Present {
	answers := m.Answers()
	p := Present{Answers: answers, Tally: map[string]int{}}
	for _, a := range m.agents {
		if a.vote != nil {
			p.Votes = append(p.Votes, *a.vote)
		}
	}
	pr := m.presenter()
	p.Winner = pr.id
	how := "presenter_agent"
	if pr.id != m.cfg.Presenter {
		how = "decomposition: the last agent presents"
	}
	p.How = prefix + how
	var parts []string
	for _, x := range answers {
		if x.Agent == pr.id {
			p.Answer.Label, p.Answer.Rev = x.Label, x.Rev
		}
		parts = append(parts, fmt.Sprintf("[%s]\n%s", x.Label, x.Content))
	}
	p.Answer.Agent = pr.id
	if len(parts) == 1 {
		p.Answer.Content = answers[0].Content
	} else {
		p.Answer.Content = strings.Join(parts, "\n\n")
	}
	return p
}

// Checklist-gated voting in decomposition mode: the terminate action is
// stop, and an agent scores only its own current work, flat
// ({"E1": 8, …}), as upstream's decomposition checklist does.

// ownWork is the answer set a's checklist scores in decomposition mode:
// its own current answer only.
func (m *Machine) ownWork(a *agent) []Answer {
	for _, x := range m.Answers() {
		if x.Agent == a.id {
			return []Answer{x}
		}
	}
	return nil
}

// Compiled on first use: every process pays for package init, massgen
// --version included.
var (
	voteVerdict = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Verdict: vote( for agent\d+)?\.`) })
	voteNext    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(call|is to) vote( \(?for agent\d+\)?)?`) })
)

// stopWords says the checklist's and the gate's words in decomposition
// mode, where the terminate action is stop, not vote.
func (m *Machine) stopWords(s string) string {
	if !m.decomposition() || s == "" {
		return s
	}
	s = voteVerdict().ReplaceAllString(s, "Verdict: stop.")
	s = voteNext().ReplaceAllString(s, "$1 stop")
	s = strings.ReplaceAll(s, `"verdict":"vote"`, `"verdict":"stop"`)
	s = strings.ReplaceAll(s, "do not vote now", "do not stop now")
	s = strings.ReplaceAll(s, "not vote.", "not stop.")
	s = strings.ReplaceAll(s, "before you vote", "before you stop")
	s = strings.ReplaceAll(s, "score every current answer on every criterion", "score your own current work on every criterion")
	s = strings.ReplaceAll(s, "or vote for the best existing answer", "or call stop if your subtask is done")
	s = strings.ReplaceAll(s, "vote for the best existing answer, or wait", "call stop if your subtask is done, or wait")
	s = strings.ReplaceAll(s, "but vote and new_answer", "but stop and new_answer")
	s = strings.ReplaceAll(s, "only vote or new_answer", "only stop or new_answer")
	return strings.ReplaceAll(s, "Checklist-gated voting", "Checklist gate")
}

// gatedIn is gated in the words of the run's mode.
func (m *Machine) gatedIn(a *agent, kind ActionKind) string {
	return m.stopWords(m.gated(a, kind))
}

// CriteriaFor returns agent id's criteria: its own (PerAgent, decomposition
// mode's per-subtask criteria) when it has some, else the team's.
func (c *Checklist) CriteriaFor(id string) []Criterion {
	if c != nil && len(c.PerAgent[id]) > 0 {
		return c.PerAgent[id]
	}
	return c.CriteriaOf()
}

// agentCriteriaSet gives one agent its own criteria before the run starts.
func (m *Machine) agentCriteriaSet(in CriteriaSet) []Command {
	if _, ok := m.byID[in.Agent]; !ok {
		return nil
	}
	ck := *m.cfg.Checklist
	ck.PerAgent = make(map[string][]Criterion, len(ck.PerAgent)+1)
	for k, v := range m.cfg.Checklist.PerAgent {
		ck.PerAgent[k] = v
	}
	ck.PerAgent[in.Agent] = in.Criteria
	m.cfg.Checklist = &ck
	return nil
}

// SubtaskCriteria are upstream v0.1.73's checklist criteria for executing
// one decomposition subtask (build_decomposition_execution_criteria).
func SubtaskCriteria(subtask string) []Criterion {
	scope := strings.Join(strings.Fields(subtask), " ")
	if r := []rune(scope); len(r) > 140 {
		scope = strings.TrimRight(string(r[:137]), " ") + "..."
	}
	if scope == "" {
		scope = "your assigned subtask"
	}
	return []Criterion{
		{Text: "The current work substantially completes and improves the owned scope for this subtask: " + scope, Category: CatStandard},
		{Text: "Relevant peer work that touches this subtask is incorporated cleanly where needed — interfaces, contracts, shared assets, or adjacent integration boundaries.", Category: CatStandard},
		{Text: "Changes stay within the owned scope except for necessary adjacent integration. The agent does not take over unrelated work owned by other subtasks.", Category: CatStandard},
		{Text: "The current work does not introduce regressions in the owned area or shared contracts it depends on. Validation evidence is strong enough to support that claim.", Category: CatStandard},
		{Text: "This revision is a meaningful improvement to the owned subtask — it advances quality or completeness, not just reformats, renames, or makes superficial edits that don't change the substance.", Category: CatStandard},
	}
}
