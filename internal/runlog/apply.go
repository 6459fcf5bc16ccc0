package runlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// This file is the event dispatch: how each event type changes the view
// and which files it produces. The files themselves are written by the
// helpers in steps.go, votes.go and status.go.

// attempt is the coordination state of one orchestration attempt: it is
// reset by RunRestarted because the orchestrator starts from zero too.
type attempt struct {
	n          int
	base       string // directory for this attempt's per-agent files
	epoch      int    // answers accepted in this attempt so far
	hasAnswer  map[string]bool
	epochVotes []voteRecord // votes since the last accepted answer

	winner, winReason string
	winVotes          map[string]int
	finalAgent        string
	finalReason       string
	finalChars        int
	finalPreview      string
	finalOut          stream

	groups  []*group // table rows
	section string   // "" while coordinating, else a fixed table section title
	notes   []string // table footer lines (restarts, run timeout, post-evaluation)
}

// apply handles one event under w.mu.
func (w *Writer) apply(e event.Event) error {
	w.version++
	w.enterAttempt(e)
	var ag *agentState
	if e.Agent != "" {
		ag = w.agent(e.Agent)
		ag.inputTokens += e.InputTokens
		ag.outputTokens += e.OutputTokens
		ag.costUSD += e.CostUSD
		ag.lastActivity = e.Time
	}
	if e.Type.Droppable() {
		w.deltas++
		return w.writeDelta(ag, e)
	}
	w.events = append(w.events, e)
	a := w.cur
	var errs []error
	switch e.Type {
	case event.RunStarted:
		if w.question == "" && e.Text != "" {
			// The CLI did not know the question (e.g. it came on stdin
			// later): record it in the metadata too.
			w.question, w.meta.Question = e.Text, e.Text
			errs = append(errs, w.writeMetadata())
		}
		for _, id := range e.Agents {
			w.agent(id)
		}
	case event.TurnStarted:
		errs = append(errs, w.turnStarted(ag, e))
	case event.AnswerAccepted:
		a.epoch++
		w.answersTotal++
		if ag != nil {
			a.hasAnswer[ag.id] = true
		}
		a.epochVotes = nil
		w.answerAccepted(ag, e)
		a.note(e.Agent, "answered "+orDash(e.Label))
		errs = append(errs, w.writeAnswerStep(ag, e))
	case event.VoteAccepted:
		v := w.recordVote(e)
		w.voteAccepted(ag, v)
		a.note(e.Agent, voteCell(v))
		errs = append(errs, w.writeVoteStep(ag, v))
	case event.ActionRejected:
		if ag != nil {
			ag.rejections++
		}
		a.note(e.Agent, "rejected: "+truncate(oneLine(e.Reason), 60))
	case event.TurnRestarted:
		if ag != nil {
			ag.restarts++
			ag.status = agentIdle
			errs = append(errs, ag.out.separator(w.outPath(ag), "--- restarted (new answer by "+orDash(e.Target)+") ---"))
		}
		a.note(e.Agent, "restarted (new answer by "+orDash(e.Target)+")")
	case event.TurnFailed:
		if ag != nil {
			ag.failures++
			ag.lastError = e.Err
		}
		a.note(e.Agent, "turn failed: "+truncate(oneLine(e.Err), 60))
	case event.AgentFailed:
		if ag != nil {
			ag.status = agentFailed
			if e.Err != "" {
				ag.lastError = e.Err
			}
		}
		a.note(e.Agent, "failed: "+truncate(oneLine(e.Err), 60))
	case event.Timeout:
		if ag == nil {
			a.notes = append(a.notes, "Run timed out at "+e.Time.Format(time.TimeOnly)+".")
			break
		}
		ag.lastError = "turn timeout"
		a.note(e.Agent, "timeout")
	case event.WinnerSelected:
		a.winner, a.winReason = e.Agent, e.Reason
		if e.Votes != nil {
			a.winVotes = copyMap(e.Votes)
		}
		a.section = "Final presentation"
	case event.FinalStarted:
		w.phase = phasePresenting
		if ag != nil {
			ag.status = agentPresenting
		}
		a.section = "Final presentation"
		a.note(e.Agent, "presenting")
	case event.FinalAnswer:
		errs = append(errs, w.finalAnswer(ag, e))
	case event.PostEvaluation:
		w.phase = phasePostEval
		a.section = "Post-evaluation"
		cell := "post-eval: " + orDash(e.Text)
		if e.Reason != "" {
			cell += " — " + truncate(oneLine(e.Reason), 40)
		}
		a.note(e.Agent, cell)
	case event.RunRestarted:
		// handled by enterAttempt
	case event.RunFinished:
		w.runFinished(e)
		errs = append(errs, w.flushSummaries())
	}
	errs = append(errs, w.writeStatus())
	return errors.Join(errs...)
}

// enterAttempt moves to a new attempt on RunRestarted, or when an event says
// it belongs to a later attempt than the current one. RunRestarted may carry
// either the old or the new attempt number, so the next attempt is whichever
// is larger; attempts never go backwards.
func (w *Writer) enterAttempt(e event.Event) {
	switch {
	case e.Type == event.RunRestarted:
		note := "Orchestration restarted"
		if e.Reason != "" {
			note += ": " + truncate(oneLine(e.Reason), 120)
		}
		w.cur.notes = append(w.cur.notes, note+".")
		w.startAttempt(max(w.cur.n+1, e.Attempt))
	case e.Attempt > w.cur.n:
		w.startAttempt(e.Attempt)
	}
}

func (w *Writer) startAttempt(n int) {
	base := w.dir
	if w.meta.Attempts {
		base = filepath.Join(w.dir, fmt.Sprintf("attempt_%d", n))
	}
	if w.cur != nil {
		w.cur.finalOut.close()
	}
	w.cur = &attempt{n: n, base: base, hasAnswer: map[string]bool{}}
	w.attempts = append(w.attempts, w.cur)
	w.phase = phaseCoordinating
	for _, ag := range w.agents {
		ag.resetForAttempt()
	}
}

func (w *Writer) runFinished(e event.Event) {
	w.status = e.Status
	if w.status == "" {
		w.status = statusCompleted
	}
	w.finishedAt = e.Time
	w.finalErr = e.Err
	w.phase = phaseDone
	for _, ag := range w.agents {
		if ag.status != agentFailed {
			ag.status = agentDone
		}
	}
}
