package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/workspace"
)

// stream is an append-only text file filled as deltas arrive. It stays open
// between deltas (there can be thousands per turn) and remembers whether it
// is inside a reasoning block and mid-line, so markers and separators always
// start on a line of their own.
type stream struct {
	f         *os.File
	reasoning bool
	midLine   bool
	written   bool
	// failed: a write failed (a full disk). Nothing more is appended, so
	// the file is a prefix of the agent's output with no hole in it.
	failed bool
}

func (s *stream) open(path string) error {
	if s.f != nil || s.failed {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.f = f
	// Reopening a file that already has content (a restart in a log
	// without attempt dirs): assume the worst so the next separator
	// starts on a fresh line.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		s.written, s.midLine = true, true
	}
	return nil
}

// write appends text, bracketing reasoning in [reasoning] … [/reasoning]
// lines so a reader can tell thinking from the answer being written.
func (s *stream) write(path, text string, reasoning bool) error {
	if text == "" && reasoning == s.reasoning {
		return nil
	}
	if err := s.open(path); err != nil {
		return err
	}
	var b strings.Builder
	if reasoning != s.reasoning {
		s.newline(&b)
		if reasoning {
			b.WriteString("[reasoning]\n")
		} else {
			b.WriteString("[/reasoning]\n")
		}
		s.reasoning = reasoning
	}
	b.WriteString(text)
	return s.flush(&b)
}

// line writes text on lines of its own (closing a reasoning block).
func (s *stream) line(path, text string) error {
	if err := s.open(path); err != nil {
		return err
	}
	var b strings.Builder
	s.endReasoning(&b)
	s.newline(&b)
	b.WriteString(text)
	b.WriteByte('\n')
	return s.flush(&b)
}

// separator writes a line such as "--- turn 2 (epoch 1) ---", preceded by a
// blank line unless the file is empty.
func (s *stream) separator(path, line string) error {
	if err := s.open(path); err != nil {
		return err
	}
	var b strings.Builder
	s.endReasoning(&b)
	s.newline(&b)
	if s.written {
		b.WriteByte('\n')
	}
	b.WriteString(line)
	b.WriteByte('\n')
	return s.flush(&b)
}

func (s *stream) endReasoning(b *strings.Builder) {
	if s.reasoning {
		s.newline(b)
		b.WriteString("[/reasoning]\n")
		s.reasoning = false
	}
}

func (s *stream) newline(b *strings.Builder) {
	if s.midLine {
		b.WriteByte('\n')
		s.midLine = false
	}
}

func (s *stream) flush(b *strings.Builder) error {
	out := b.String()
	if out == "" || s.failed {
		return nil
	}
	s.written = true
	s.midLine = out[len(out)-1] != '\n'
	_, err := s.f.WriteString(out)
	if err != nil {
		s.failed = true
	}
	return err
}

func (s *stream) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	*s = stream{failed: s.failed} // a file that failed is not appended to again
	return err
}

// outPath is agent_outputs/<id>.txt of the current attempt.
func (w *Writer) outPath(ag *agentFiles) string {
	return filepath.Join(w.cur.base, "agent_outputs", safeName(ag.id)+".txt")
}

func (w *Writer) writeDelta(ag *agentFiles, e event.Event) error {
	switch e := e.(type) {
	case event.FinalDelta:
		path := filepath.Join(w.cur.base, "agent_outputs", "final_presentation.txt")
		return w.cur.finalOut.write(path, e.Text, false)
	case event.TextDelta:
		if e.Tool != "" {
			// An answer as it streams: the file gets it whole, once
			// accepted (the new_answer line).
			return nil
		}
		return ag.out.write(w.outPath(ag), e.Text, false)
	case event.ReasoningDelta:
		return ag.out.write(w.outPath(ag), e.Text, true)
	}
	return nil
}

// outLine writes a step of the agent's turn (a tool call, its workflow
// action, a failure) to its output file, on lines of its own: the model
// answers through tool calls, so without these lines the file would hold
// little more than turn headers.
func (w *Writer) outLine(ag *agentFiles, line string) error {
	if ag == nil {
		return nil
	}
	return ag.out.line(w.outPath(ag), line)
}

func (w *Writer) turnStarted(ag *agentFiles, e event.TurnStarted) error {
	ag.turns++
	ag.turnSeen, ag.prompt = true, e.Prompt
	ag.shown = make([]string, len(e.Shown))
	for i, r := range e.Shown {
		ag.shown[i] = r.Label
	}
	_, _, epoch := w.view.Progress()
	line := "--- turn " + itoa(ag.turns) + " (epoch " + itoa(epoch) + ") ---"
	return ag.out.separator(w.outPath(ag), line)
}

// stepDir creates agent_<id>/<step-ts>/ for one answer or vote. Two events
// of one agent in the same microsecond get _2, _3… rather than sharing (and
// overwriting) a directory.
func (w *Writer) stepDir(ag *agentFiles, t time.Time) (string, error) {
	return mkdirUnique(filepath.Join(w.cur.base, "agent_"+safeName(ag.id), stamp(t)))
}

// writeAnswerStep saves an accepted answer with the prompt that produced it.
func (w *Writer) writeAnswerStep(ag *agentFiles, e event.AnswerAccepted) error {
	if ag == nil {
		return nil
	}
	dir, err := w.stepDir(ag, e.Time)
	if err != nil {
		return err
	}
	errs := []error{w.put(filepath.Join(dir, "answer.txt"), []byte(e.Content)), w.writeContext(ag, dir)}
	if e.Workspace != "" {
		// The snapshot is never changed once taken: hard links suffice.
		_, err := workspace.CopyTree(e.Workspace, filepath.Join(dir, "workspace"), workspace.Link, 0)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeVoteStep saves an accepted vote with the labels the voter was shown.
func (w *Writer) writeVoteStep(ag *agentFiles, e event.VoteAccepted) error {
	if ag == nil {
		return nil
	}
	dir, err := w.stepDir(ag, e.Time)
	if err != nil {
		return err
	}
	_, _, epoch := w.view.Progress()
	sv := stepVote{
		VoterID:         e.Agent,
		VotedFor:        e.Target,
		VotedForLabel:   e.TargetLabel,
		VotedForAnswer:  e.TargetAnswer,
		Reason:          e.Reason,
		Timestamp:       e.Time.Format(time.RFC3339Nano),
		Epoch:           epoch,
		AvailableLabels: ag.shown,
	}
	if sv.AvailableLabels == nil {
		sv.AvailableLabels = []string{}
	}
	return errors.Join(w.putJSON(filepath.Join(dir, "vote.json"), sv), w.writeContext(ag, dir))
}

// writeContext writes context.txt: the prompt of the agent's latest turn in
// this attempt. Without a TurnStarted there is no prompt to record, and an
// empty file would wrongly suggest the agent was sent nothing.
func (w *Writer) writeContext(ag *agentFiles, dir string) error {
	if !ag.turnSeen {
		return nil
	}
	return w.put(filepath.Join(dir, "context.txt"), []byte(ag.prompt))
}

// finalAnswer records the final answer under final/<presenter>/, with
// context.txt: what the presenter saw (DESIGN.md §6), when it presented.
// With attempt dirs the top-level final/ is replaced by each attempt's
// final answer, so it always holds the last attempt's (as MassGen copies it).
func (w *Writer) finalAnswer(ag *agentFiles, e event.FinalAnswer) error {
	a := w.cur
	id := e.Agent
	if id == "" {
		s := w.snapshot()
		id = s.Winner
		ag = w.files(id)
	}
	if id == "" {
		id = "unknown"
	}
	_, _, epoch := w.view.Progress()
	cell := "final answer (" + itoa(utf8.RuneCountInString(e.Text)) + " chars)"
	if e.Reason != "" && e.Reason != "presentation" {
		cell = "final answer: " + truncate(oneLine(e.Reason), 60)
	}
	a.note(id, cell, epoch)

	var context []byte
	if ag != nil && ag.present != "" {
		context = []byte(ag.present)
	}
	// The answer first (on a full disk, with the reserve's space), then
	// what the presenter saw.
	write := func(root string) error {
		dir := filepath.Join(root, "final", safeName(id))
		errs := []error{w.putReserved(filepath.Join(dir, "answer.txt"), []byte(e.Text))}
		if context != nil {
			errs = append(errs, w.put(filepath.Join(dir, "context.txt"), context))
		}
		return errors.Join(errs...)
	}
	var top func() error
	top = func() error {
		err := write(a.base)
		if a.base != w.dir {
			err = errors.Join(err, os.RemoveAll(filepath.Join(w.dir, "final")), write(w.dir))
		}
		if err == nil {
			w.answerFile = filepath.Join(w.dir, "final", safeName(id), "answer.txt")
			w.pendingFinal = nil
		} else {
			w.answerFile = ""
			w.pendingFinal = top
		}
		return err
	}
	return top()
}

// retryFinal writes the final answer again if its write failed (a full
// disk), once the run has finished and the reserve may be given up.
func (w *Writer) retryFinal() error {
	if w.pendingFinal == nil {
		return nil
	}
	return w.pendingFinal()
}

// safeName makes an agent id usable as one path element: ids come from the
// user's config, and "../x" or "a/b" must not escape the log dir.
func safeName(id string) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, id)
	if strings.Trim(s, ".") == "" {
		return strings.Repeat("_", max(1, len(s)))
	}
	return s
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

// oneLine collapses all whitespace so a reason or error fits a table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
