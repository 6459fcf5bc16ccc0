package coord

import "fmt"

// The team's answer cap (Settings.MaxAnswersGlobal, upstream v0.1.73's
// max_new_answers_global): checked before an agent's own caps, as upstream
// does, and with its words.

// totalAnswers counts the answers of all agents, every revision.
func (m *Machine) totalAnswers() int {
	n := 0
	for _, a := range m.agents {
		n += len(a.answers)
	}
	return n
}

// globalCapped says why no agent may give another answer, or "".
func (m *Machine) globalCapped() string {
	if m.cfg.MaxAnswersGlobal <= 0 || m.totalAnswers() < m.cfg.MaxAnswersGlobal {
		return ""
	}
	if m.decomposition() {
		return fmt.Sprintf("The global maximum of %d new answer(s) has been reached across all agents. "+
			"Please call `stop` to signal you are done.", m.cfg.MaxAnswersGlobal)
	}
	return fmt.Sprintf("The global maximum of %d new answer(s) has been reached across all agents. "+
		"Please vote for the best existing answer using the `vote` tool.", m.cfg.MaxAnswersGlobal)
}

// lastWork is the start of a's last answer, for an automatic stop's summary.
func lastWork(a *agent) string {
	last := ""
	if n := len(a.answers); n > 0 {
		last = a.answers[n-1]
	}
	if r := []rune(last); len(r) > 200 {
		last = string(r[:200])
	}
	return last
}
