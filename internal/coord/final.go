package coord

import "fmt"

// This file holds the rules after coordination (DESIGN.md §2, steps 5–6):
// the final presentation and its fallbacks, post-evaluation and restarts,
// the direct single call, and how the deadline, the presentation grace, a
// spent budget and an interrupt end the run.

// DirectReason is the Final reason of a direct run.
const DirectReason = "single agent without coordination (use_orchestrator_for_single_agent: false)"

// conclude ends coordination with the decision p: the winner presents, or
// its stored answer is final at once.
func (m *Machine) conclude(p Present) []Command {
	m.phase = phasePresenting
	fallback := false
	p.Skip = m.skipPresentation()
	if p.Skip == "" && m.byID[p.Winner].status == Failed {
		p.Skip, fallback = "the winner had failed, so its stored answer is the final answer", true
	}
	m.win = &p
	cmds := []Command{p}
	if p.Skip != "" {
		return append(cmds, m.finalAnswer(p.Answer.Content, p.Skip, fallback)...)
	}
	if m.deadline {
		cmds = append(cmds, m.graceTimer())
	}
	return cmds
}

// skipPresentation says why the winner's answer is final as it stands, or
// "" when the winner presents. Client tools need the presentation: it is
// the only call that offers them.
func (m *Machine) skipPresentation() string {
	if m.cfg.ClientTools {
		return ""
	}
	switch {
	case m.cfg.Presentation == PresentNever:
		return "the winning answer is the final answer (final presentation disabled)"
	case m.cfg.Presentation == PresentAuto && len(m.agents) == 1:
		return "the winning answer is the final answer (a single agent has no other answers to combine)"
	}
	return ""
}

// graceTimer bounds the presentation once the deadline has passed: the run
// ends by the deadline plus the grace, whatever the presenter does.
func (m *Machine) graceTimer() SetTimer {
	return SetTimer{Timer: TimerGrace, After: m.cfg.PresentationGrace}
}

// finalAnswer records the attempt's final answer, then has the winner
// evaluate it (post-evaluation) or finishes the run.
func (m *Machine) finalAnswer(text, reason string, fallback bool) []Command {
	f := Final{Agent: m.win.Winner, Text: text, Reason: reason, Fallback: fallback}
	m.final = &f
	cmds := []Command{f}
	// Evaluation needs restarts left, money left and time left: a restart
	// past the deadline or the budget would end at once with nothing.
	if m.cfg.MaxRestarts > 0 && m.attempt <= m.cfg.MaxRestarts && m.budget == "" && !m.deadline {
		m.phase = phaseEvaluating
		return append(cmds, Evaluate{Agent: m.win.Winner, Final: text})
	}
	return append(cmds, m.finish(RunCompleted, ""))
}

// finish ends the run with what is known now.
func (m *Machine) finish(status RunStatus, reason string) Finish {
	m.phase = phaseDone
	f := Finish{Status: status, Reason: reason, Attempt: m.attempt, Answers: m.Answers(),
		Deadline: m.cut, GraceExpired: m.graceExpired}
	if status == RunFailed {
		for _, a := range m.agents {
			if a.lastFailure != nil {
				f.Failures = append(f.Failures, *a.lastFailure)
			}
		}
	}
	if m.win != nil {
		f.Winner, f.How, f.Tally = m.win.Winner, m.win.How, m.win.Tally
	}
	if m.final != nil {
		f.Final = m.final.Text
		if m.final.Fallback {
			f.Fallback = m.final.Reason
		}
	}
	return f
}

func (m *Machine) presented(in Presented) []Command {
	switch m.phase {
	case phaseDirect:
		return m.directDone(in)
	case phasePresenting:
	default:
		return nil
	}
	stored := m.win.Answer.Content
	switch {
	case in.Err != "":
		return m.finalAnswer(stored, fmt.Sprintf("the presentation failed (%s), so the winner's stored answer is the final answer", in.Err), true)
	case in.Text == "" && in.ToolCalls > 0:
		return m.finalAnswer("", "presentation", false) // the answer is the tool calls; the client runs them
	case in.Text == "":
		return m.finalAnswer(stored, "the presentation was empty, so the winner's stored answer is the final answer", true)
	}
	return m.finalAnswer(in.Text, "presentation", false)
}

func (m *Machine) directDone(in Presented) []Command {
	id := m.win.Winner
	switch {
	case in.Err != "":
		return m.directFailed(RunFailed, fmt.Sprintf("%s: %s", AgentRef(id), in.Err), in.Failure)
	case in.Text == "" && in.ToolCalls == 0:
		return m.directFailed(RunFailed, fmt.Sprintf("%s: the model returned an empty answer", AgentRef(id)), nil)
	}
	f := Final{Agent: id, Text: in.Text, Reason: DirectReason}
	m.final = &f
	return []Command{f, m.finish(RunCompleted, "")}
}

// directFailed ends a direct run without an answer; its only agent has
// failed with it.
func (m *Machine) directFailed(status RunStatus, reason string, f *Failure) []Command {
	fin := m.finish(status, reason)
	if f != nil {
		fin.Failures = []Failure{*f}
	}
	return []Command{AgentFailed{Agent: m.win.Winner, Failures: 1, Err: reason, Reason: "its only call", Failure: f}, fin}
}

func (m *Machine) evaluated(in Evaluated) []Command {
	if m.phase != phaseEvaluating {
		return nil
	}
	if !in.Restart || m.budget != "" || m.deadline {
		return []Command{m.finish(RunCompleted, "")}
	}
	m.attempt++
	cmds := []Command{Restart{Attempt: m.attempt, Agent: m.win.Winner, Reason: in.Reason, Instructions: in.Instructions, Final: m.final.Text}}
	for _, a := range m.agents {
		*a = agent{id: a.id}
	}
	m.epoch, m.win, m.final = 0, nil, nil
	m.phase = phaseCoordinating
	for _, a := range m.agents {
		cmds = append(cmds, m.startTurn(a)...)
	}
	return cmds
}

// deadlinePassed applies the run deadline: coordination stops and the
// current votes decide; a presentation in flight gets the grace; an
// evaluation in flight is dropped (the final answer stands).
func (m *Machine) deadlinePassed() []Command {
	if m.deadline {
		return nil
	}
	m.deadline = true
	switch m.phase {
	case phaseCoordinating:
		m.cut = true
		return m.stop("timeout", true)
	case phasePresenting:
		return []Command{m.graceTimer()}
	case phaseEvaluating:
		return []Command{CancelCall{Reason: "run deadline"}, m.finish(RunCompleted, "")}
	case phaseDirect:
		return append([]Command{CancelCall{Reason: "run deadline"}},
			m.directFailed(RunTimedOut, fmt.Sprintf("no answer before the run deadline (%s)", m.cfg.Timeout), nil)...)
	}
	return nil
}

// graceExpiredInput ends a presentation that outlived the deadline plus
// the grace: the winner's stored answer is final.
func (m *Machine) graceExpiredInput() []Command {
	if m.phase != phasePresenting {
		return nil
	}
	m.graceExpired = true
	why := fmt.Sprintf("the presentation did not finish by the run deadline plus the presentation grace (%s), so the winner's stored answer is the final answer", m.cfg.PresentationGrace)
	return append([]Command{CancelCall{Reason: "presentation grace expired"}}, m.finalAnswer(m.win.Answer.Content, why, true)...)
}

// budgetSpent stops coordination (the best answer so far wins) and rules
// out post-evaluation restarts.
func (m *Machine) budgetSpent(in BudgetSpent) []Command {
	if m.budget != "" || m.phase == phaseDone {
		return nil
	}
	m.budget = in.Reason
	if m.phase == phaseCoordinating {
		return m.stop("budget", false)
	}
	return nil
}

// interrupted ends the run at once; a presentation in flight leaves the
// winner's stored answer as the answer of the interrupted run.
func (m *Machine) interrupted() []Command {
	switch m.phase {
	case phaseNew, phaseDone:
		return nil
	case phasePresenting:
		f := Final{Agent: m.win.Winner, Text: m.win.Answer.Content, Fallback: true,
			Reason: "interrupted during the final presentation, so the winner's stored answer is kept"}
		m.final = &f
		return []Command{f, m.finish(RunInterrupted, "interrupted during the final presentation")}
	case phaseEvaluating:
		return []Command{m.finish(RunInterrupted, "interrupted during post-evaluation")}
	case phaseDirect:
		return m.directFailed(RunInterrupted, "interrupted", nil)
	}
	return []Command{m.finish(RunInterrupted, "interrupted")}
}
