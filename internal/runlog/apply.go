package runlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// This file is the event dispatch: how each event changes the files. The
// state of the run is the writer's event.View; what is kept here is only
// what the files need beyond it (the table's rows, the per-agent output
// files, the prompts behind context.txt).

// attempt is what the log keeps of one orchestration attempt.
type attempt struct {
	n        int
	base     string          // directory for this attempt's per-agent files
	end      *event.Snapshot // the run as the attempt ended; nil while current
	finalOut stream          // agent_outputs/final_presentation.txt

	groups  []*group // table rows
	section string   // "" while coordinating, else a fixed table section title
	notes   []string // table footer lines (restarts, run timeout, budget, post-evaluation)
}

// agentFiles is what the writer keeps per agent for its files.
type agentFiles struct {
	id       string
	out      stream // agent_outputs/<id>.txt
	turns    int
	turnSeen bool     // a TurnStarted arrived in this attempt: context.txt exists
	prompt   string   // of its latest turn
	shown    []string // anonymous labels of its latest turn
	present  string   // the prompt of its final presentation in this attempt
}

func (w *Writer) files(id string) *agentFiles {
	if id == "" {
		return nil
	}
	f := w.agents[id]
	if f == nil {
		f = &agentFiles{id: id}
		w.agents[id] = f
	}
	return f
}

// apply handles one event under w.mu.
func (w *Writer) apply(e event.Event) error {
	w.version++
	w.enterAttempt(e)
	w.view.Apply(e)
	ag := w.files(event.AgentOf(e))
	_, _, epoch := w.view.Progress()
	if e.Type().Droppable() {
		return w.writeDelta(ag, e)
	}
	rec := event.ToRecord(e)
	w.events = append(w.events, rec)
	var errs []error
	if !w.persisted.Load() {
		errs = append(errs, w.appendJournal(rec))
	}
	a := w.cur
	switch e := e.(type) {
	case event.RunStarted:
		if w.meta.Question == "" && e.Question != "" {
			// The CLI did not know the question (e.g. it came on stdin
			// later): record it in the metadata too.
			w.meta.Question = e.Question
			errs = append(errs, w.writeMetadata())
		}
	case event.TurnStarted:
		errs = append(errs, w.turnStarted(ag, e))
	case event.ToolCalled:
		a.note(e.Agent, toolCell(e), epoch)
		errs = append(errs, w.outLine(ag, event.Describe(e)))
	case event.AnswerAccepted:
		a.note(e.Agent, "answered "+orDash(e.Label), epoch)
		errs = append(errs, w.writeAnswerStep(ag, e),
			w.outLine(ag, fmt.Sprintf("→ new_answer accepted as %s (shown as %s):\n%s", e.Label, e.AnonLabel, e.Content)))
	case event.VoteAccepted:
		a.note(e.Agent, voteCell(e), epoch)
		errs = append(errs, w.writeVoteStep(ag, e),
			w.outLine(ag, fmt.Sprintf("→ vote for %s (%s's %s): %s", e.TargetLabel, e.Target, e.TargetAnswer, e.Reason)))
	case event.ActionRejected:
		a.note(e.Agent, "rejected: "+truncate(oneLine(e.Reason), 60), epoch)
		errs = append(errs, w.outLine(ag, "✗ rejected: "+e.Reason))
	case event.TurnRestarted:
		errs = append(errs, ag.out.separator(w.outPath(ag), "--- restarted (new answer by "+orDash(e.Cause)+") ---"))
		a.note(e.Agent, "restarted (new answer by "+orDash(e.Cause)+")", epoch)
	case event.TurnFailed:
		a.note(e.Agent, "turn failed: "+truncate(oneLine(e.Err), 60), epoch)
		errs = append(errs, w.outLine(ag, "! turn failed: "+e.Err))
	case event.AgentFailed:
		a.note(e.Agent, "failed: "+truncate(oneLine(e.Err), 60), epoch)
	case event.Timeout:
		if ag == nil {
			a.notes = append(a.notes, "Run timed out at "+e.Time.Format(time.TimeOnly)+".")
			break
		}
		a.note(e.Agent, "timeout", epoch)
		errs = append(errs, w.outLine(ag, "! turn timed out: "+e.Err))
	case event.BudgetExceeded:
		a.notes = append(a.notes, "Budget reached: "+oneLine(e.Reason)+".")
	case event.WinnerSelected:
		a.section = "Final presentation"
	case event.FinalStarted:
		a.section = "Final presentation"
		a.note(e.Agent, "presenting", epoch)
		if ag != nil {
			ag.present = e.Prompt
			errs = append(errs, ag.out.separator(w.outPath(ag), "--- final presentation (epoch "+itoa(epoch)+"): streamed to final_presentation.txt ---"))
		}
	case event.FinalAnswer:
		errs = append(errs, w.finalAnswer(ag, e))
	case event.PostEvaluation:
		a.section = "Post-evaluation"
		cell := "post-eval: " + orDash(e.Verdict)
		if e.Reason != "" {
			cell += " — " + truncate(oneLine(e.Reason), 40)
		}
		a.note(e.Agent, cell, epoch)
	case event.RunFinished:
		// status.json first: see finishFiles.
		return errors.Join(append(errs, w.finishFiles())...)
	}
	errs = append(errs, w.writeStatus())
	return errors.Join(errs...)
}

// enterAttempt moves to a new attempt on RunRestarted, or when an event says
// it belongs to a later attempt than the current one. RunRestarted may carry
// either the old or the new attempt number, so the next attempt is whichever
// is larger; attempts never go backwards. It runs before the view applies
// the event, so the ending attempt keeps the view's last state of it.
func (w *Writer) enterAttempt(e event.Event) {
	h := e.Head()
	switch {
	case e.Type() == event.TypeRunRestarted:
		note := "Orchestration restarted"
		if r := e.(event.RunRestarted).Reason; r != "" {
			note += ": " + truncate(oneLine(r), 120)
		}
		w.cur.notes = append(w.cur.notes, note+".")
		w.startAttempt(max(w.cur.n+1, h.Attempt))
	case h.Attempt > w.cur.n:
		w.startAttempt(h.Attempt)
	}
}

func (w *Writer) startAttempt(n int) {
	base := w.dir
	if w.meta.Attempts {
		base = filepath.Join(w.dir, fmt.Sprintf("attempt_%d", n))
	}
	if w.cur != nil {
		w.cur.finalOut.close()
		end := w.snapshot()
		w.cur.end = &end
	}
	w.cur = &attempt{n: n, base: base}
	w.attempts = append(w.attempts, w.cur)
	for _, ag := range w.agents {
		ag.turnSeen, ag.prompt, ag.shown, ag.present = false, "", nil, ""
		ag.out.close()
	}
}

// attemptSnapshot is the run as attempt a ended, or as it is now.
func (w *Writer) attemptSnapshot(a *attempt) event.Snapshot {
	if a.end != nil {
		return *a.end
	}
	return w.snapshot()
}
