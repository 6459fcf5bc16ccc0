package coord

import (
	"fmt"
	"time"
)

// Per-round timeouts (upstream MassGen v0.1.73's timeout_settings
// initial_round_timeout_seconds, subsequent_round_timeout_seconds and
// round_timeout_grace_seconds). A round is one turn: its clock starts when
// the turn's request goes out (after any backoff), and the limit is the
// first-round one for a turn started before the agent had an answer. The
// stages, each fed by the orchestrator as the round timer fires:
//
//   - soft: the turn is told to wrap up — give its answer (work in
//     progress is fine) or vote within the grace;
//   - hard, one grace later: the turn may only call vote or new_answer;
//     its other tools are refused;
//   - cutoff, one more grace later: the turn is cancelled and counts as a
//     failed turn (its agent retries with a fresh round, and leaves once
//     its failure budget is spent).
//
// Upstream acts only at tool calls (a post-tool hook warns, a pre-tool hook
// blocks, ten blocked calls end the turn), so a model that streams text
// and calls no tool is never warned or stopped. Here time drives the
// stages: the warning reaches the model before its next request whatever
// it does, and a turn that ignores it ends at the cutoff.

// RoundStage is a stage of a round timer.
type RoundStage string

const (
	RoundSoft   RoundStage = "soft"
	RoundHard   RoundStage = "hard"
	RoundCutoff RoundStage = "cutoff"
)

// roundLimit is the soft limit of a's turn now starting, or 0.
func (m *Machine) roundLimit(a *agent) time.Duration {
	if a.firstTurn {
		return m.cfg.FirstRoundTimeout
	}
	return m.cfg.LaterRoundTimeout
}

// roundTimer is the soft-limit timer of a's turn now starting, counted
// from when its request goes out (after delay).
func (m *Machine) roundTimer(a *agent, delay time.Duration) (SetTimer, bool) {
	limit := m.roundLimit(a)
	if limit <= 0 {
		return SetTimer{}, false
	}
	return SetTimer{Timer: TimerRound, After: delay + limit, Agent: a.id, Turn: a.turn, Stage: RoundSoft}, true
}

// roundTimeUp moves the turn's round to the stage that passed. A stage of
// a turn no longer in flight, or out of order, changes nothing.
func (m *Machine) roundTimeUp(in RoundTimeUp) []Command {
	a, ok := m.current(in.Agent, in.Turn)
	if !ok {
		return nil
	}
	grace := m.cfg.RoundGrace
	next := func(stage RoundStage) SetTimer {
		return SetTimer{Timer: TimerRound, After: grace, Agent: a.id, Turn: a.turn, Stage: stage}
	}
	switch {
	case in.Stage == RoundSoft && a.round == "":
		a.round = RoundSoft
		return []Command{
			WrapUp{Agent: a.id, Turn: a.turn, Message: m.stopWords(fmt.Sprintf(
				"ROUND TIME LIMIT REACHED: this round's limit of %s has passed. Wrap up now: within %s, call new_answer with your answer as it stands (work in progress is fine; a later round may improve it) or vote for the best existing answer. After that, every tool but vote and new_answer is blocked.",
				m.roundLimit(a), grace))},
			next(RoundHard),
		}
	case in.Stage == RoundHard && a.round == RoundSoft:
		a.round = RoundHard
		return []Command{
			WrapUp{Agent: a.id, Turn: a.turn, Hard: true, Message: m.stopWords(fmt.Sprintf(
				"HARD ROUND TIMEOUT: only vote or new_answer are allowed now; every other tool is blocked. Call one of them at once: this turn ends in %s.", grace))},
			next(RoundCutoff),
		}
	case in.Stage == RoundCutoff && a.round == RoundHard:
		a.round = RoundCutoff
		msg := fmt.Sprintf("round timed out: no vote or new_answer %s after the hard round timeout", grace)
		cmds := []Command{CancelTurn{Agent: a.id, Turn: a.turn, Reason: msg}}
		return append(cmds, m.turnFailed(TurnFailed{Agent: a.id, Turn: a.turn, Err: msg,
			Failure: &Failure{Kind: FailTimeout, Agent: a.id, Message: msg}})...)
	}
	return nil
}
