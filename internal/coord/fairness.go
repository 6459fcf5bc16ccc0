package coord

import "fmt"

// Fairness (upstream MassGen v0.1.73, on by default): no agent may run more
// than Settings.FairnessLeadCap answers ahead of the slowest agent that is
// still working on the current answer set. Without it the fastest model
// piles up revisions while the others are still reading the first ones,
// and the run converges on whoever is quickest rather than best. Two rules
// carry it out:
//
//   - the lead cap: a new_answer that would put its author more than the
//     cap ahead is rejected, with a message that says to wait or vote; the
//     turn goes on and may still vote;
//   - the pause: an agent that has answered and whose next answer the cap
//     would reject is not started at all (it would only burn tokens on an
//     answer it may not give); it starts as soon as the others catch up,
//     vote or leave.
//
// "Active" agents are those that count for the cap: neither voted in this
// epoch nor failed (upstream: not voted, not killed). With fewer than two
// of them there is nobody to be ahead of. An agent that has no answer yet
// is never paused: its first answer is its own independent work.

// fairnessOn reports whether the lead cap applies.
func (m *Machine) fairnessOn() bool { return m.cfg.FairnessLeadCap > 0 }

// lead is how far ahead agent a would be with one more answer: its answer
// count plus one, minus the fewest answers of the other active agents; ok
// is false when no other agent is active (nobody to be ahead of).
func (m *Machine) lead(a *agent) (lead, slowest int, ok bool) {
	slowest = -1
	for _, o := range m.agents {
		if o == a || o.status == Voted || o.status == Failed {
			continue
		}
		if n := len(o.answers); slowest < 0 || n < slowest {
			slowest = n
		}
	}
	if slowest < 0 {
		return 0, 0, false
	}
	return len(a.answers) + 1 - slowest, slowest, true
}

// leadCapped says why a's next answer would break the lead cap, or "".
func (m *Machine) leadCapped(a *agent) string {
	if !m.fairnessOn() {
		return ""
	}
	lead, slowest, ok := m.lead(a)
	if !ok || lead <= m.cfg.FairnessLeadCap {
		return ""
	}
	return m.stopWords(fmt.Sprintf("Fairness lead cap reached: this would be your answer %d while the slowest agent still working has %d (fairness_lead_cap_answers: %d). Do not call new_answer now: vote for the best existing answer, or wait for the others to catch up.",
		len(a.answers)+1, slowest, m.cfg.FairnessLeadCap))
}

// paused reports whether idle agent a waits for fairness instead of
// starting a turn: it has answered, and its next answer would break the
// lead cap.
func (m *Machine) paused(a *agent) bool {
	return a.status == Idle && len(a.answers) > 0 && m.leadCapped(a) != ""
}
