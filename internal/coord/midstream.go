package coord

// Mid-stream peer updates (upstream MassGen v0.1.73's delivery protocol,
// on top of restart_policy: inject). A new answer is injected into the
// in-flight turns of the others, with limits:
//
//   - max_midstream_injections_per_round (default 2; fairness off lifts
//     it): a turn is sent at most this many new answers; past it, it goes
//     on with the answers it has;
//   - defer_peer_updates_until_restart: nothing is injected; under the
//     checklist gate only once the agent has had a checklist accepted,
//     unless allow_midstream_peer_updates_before_checklist_submit: false.
//
// An update that is not injected is not lost: the turn's vote, decided on
// an older answer set, is stale and starts a fresh turn with the current
// answers (upstream ignores the vote and restarts the agent: the same
// outcome), and a new answer from it is judged against the current set.
// A turn writing its agent's first answer is never sent one
// (independent_first_answer).

// injectable reports whether a new answer may be injected into o's
// in-flight turn now.
func (m *Machine) injectable(o *agent) bool {
	if m.deferred(o) {
		return false
	}
	if m.fairnessOn() && m.cfg.MaxInjections > 0 && o.injected >= m.cfg.MaxInjections {
		return false
	}
	return true
}

// deferred reports whether o's updates wait for its next turn.
func (m *Machine) deferred(o *agent) bool {
	if !m.cfg.DeferUpdates {
		return false
	}
	if m.cfg.Checklist.Gates(o.id) && !o.checked && !m.cfg.DeferBeforeChecklist {
		return false // mid-stream updates until its first accepted checklist
	}
	return true
}
