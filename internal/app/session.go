package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/store"
)

// SessionOptions say which session a CLI process works in.
type SessionOptions struct {
	Continue bool   // the most recent session
	ID       string // this one (an unambiguous prefix will do)
}

// Session is a conversation kept in the sessions database: each turn is a
// team run that sees the earlier completed turns as history. Turns are
// written as they go (store package), so an interrupted process loses
// nothing that was accepted, and --continue picks the session up again.
type Session struct {
	env     *Env
	st      *store.Store
	info    store.Session // ID "" until the first turn creates it
	history []llm.Message
	// Interrupted are the turns found running, whose process had died,
	// when the session was resumed.
	Interrupted []int
	pending     *store.Turn // the last turn, when it was interrupted
	last        int         // the last turn run by this process
}

// OpenSession opens the sessions database of env.WorkDir and the session o
// names (none: a new one, created with its first turn).
func OpenSession(ctx context.Context, env *Env, o SessionOptions) (*Session, error) {
	env.WithDefaults()
	st, err := store.Open(ctx, store.DefaultPath(env.WorkDir))
	if err != nil {
		return nil, execErr("%v", err)
	}
	s := &Session{env: env, st: st}
	switch {
	case o.ID != "":
		s.info, err = st.Resolve(ctx, o.ID)
	case o.Continue:
		s.info, err = st.Latest(ctx)
	default:
		return s, nil
	}
	if err == nil {
		err = s.resume(ctx)
	}
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, usageErr("cannot resume: %v (massgen sessions list shows the sessions of %s)", err, env.WorkDir)
		}
		return nil, execErr("%v", err)
	}
	return s, nil
}

// resume marks the turns a dead process left running as interrupted and
// rebuilds the history from the completed turns.
func (s *Session) resume(ctx context.Context) error {
	var err error
	if s.Interrupted, err = s.st.MarkInterrupted(ctx, s.info.ID, runlog.ProcessAlive, s.env.Now()); err != nil {
		return err
	}
	turns, err := s.st.Turns(ctx, s.info.ID)
	if err != nil {
		return err
	}
	s.history = History(turns)
	if n := len(turns); n > 0 && turns[n-1].Status == store.TurnInterrupted {
		s.pending = &turns[n-1]
	}
	return nil
}

// Pending is the session's last turn when it was interrupted (a crash, kill
// -9, Ctrl+C): ResumePending finishes it.
func (s *Session) Pending() (store.Turn, bool) {
	if s.pending == nil {
		return store.Turn{}, false
	}
	return *s.pending, true
}

// ResumePending runs the interrupted last turn's question again as the
// next turn, seeded with every answer it had accepted and the votes of its
// last epoch: those agents are not asked for them again, and coordination
// goes on from there.
func (s *Session) ResumePending(ctx context.Context, rq Request, nested bool) (*Outcome, error) {
	p, ok := s.Pending()
	if !ok {
		return nil, usageErr("no interrupted turn to resume")
	}
	s.pending = nil
	rq.Question, rq.Seed, rq.SeedVotes = p.Question, nil, nil
	// The turn's replay log is the truth: written before the run acted on
	// any step, it holds every answer and the last epoch's votes even when
	// the process was killed. Without one (--no-logs), the answers the
	// session recorded are carried.
	if seeds, votes, err := runlog.Carried(p.LogDir); p.LogDir != "" && err == nil {
		rq.Seed, rq.SeedVotes = seeds, votes
	} else {
		for _, a := range p.Answers {
			rq.Seed = append(rq.Seed, orchestrator.Seed{Agent: a.Agent, Content: a.Content})
		}
	}
	// The new turn is written with the answers it carries, in one
	// transaction: a process killed before the run has accepted them again
	// leaves the new turn with them (or no new turn), never a turn with
	// none, which the next --continue would resume from nothing.
	return s.turn(ctx, rq, nested, p.Answers)
}

// History is the conversation the completed turns make: each question
// and its final answer. Interrupted and failed turns are left out: they
// have no answer to continue from.
func History(turns []store.Turn) []llm.Message {
	var h []llm.Message
	for _, t := range turns {
		if t.Status == store.TurnCompleted && t.Final != "" {
			h = append(h, llm.Message{Role: llm.RoleUser, Content: t.Question}, llm.Message{Role: llm.RoleAssistant, Content: t.Final})
		}
	}
	return h
}

// SetStderr sends what the session's turns would print on stderr to w
// (a full-screen display holds it until it leaves the screen) until the
// returned function restores the previous writer.
func (s *Session) SetStderr(w io.Writer) (restore func()) {
	old := s.env
	e := *old
	e.Stderr = w
	s.env = &e
	return func() { s.env = old }
}

// Info is the session as stored (ID "" before its first turn).
func (s *Session) Info() store.Session { return s.info }

// Store is the sessions database.
func (s *Session) Store() *store.Store { return s.st }

// History is what the next turn will see of the earlier ones.
func (s *Session) History() []llm.Message { return s.history }

// ConfigPath is the config the session ran with ("" when it came from
// discovery or a quick --model run), for --continue without --config.
func (s *Session) ConfigPath() string { return s.info.ConfigPath }

// LastTurn is the last turn this process ran (0: none yet).
func (s *Session) LastTurn() int { return s.last }

// Reset forgets the conversation for real (upstream's /reset did not):
// the next turn starts a new session, with no history.
// The error is the store's failure to mark the old session closed: the
// session is forgotten all the same.
func (s *Session) Reset(ctx context.Context) error {
	var err error
	if s.info.ID != "" {
		if err = s.st.SetSessionStatus(ctx, s.info.ID, store.SessionClosed, s.env.Now()); err != nil {
			err = fmt.Errorf("sessions database: %w", err)
		}
	}
	s.info, s.history, s.Interrupted, s.pending, s.last = store.Session{}, nil, nil, nil, 0
	return err
}

// Close marks the session closed and closes the database.
func (s *Session) Close(ctx context.Context) error {
	var err error
	if s.info.ID != "" {
		err = s.st.SetSessionStatus(ctx, s.info.ID, store.SessionClosed, s.env.Now())
	}
	return errors.Join(err, s.st.Close())
}

// Turn runs rq as the session's next turn: the earlier turns are its
// history, its logs go to the session's log directory (turn_<N>/ when
// nested, which interactive mode asks for), and its question, accepted
// answers, votes and outcome go to the store as they happen. Store
// failures are warnings: they never stop a run.
func (s *Session) Turn(ctx context.Context, rq Request, nested bool) (*Outcome, error) {
	return s.turn(ctx, rq, nested, nil)
}

// turn is Turn for a turn that starts with the answers carried (recorded
// with the turn: see ResumePending).
func (s *Session) turn(ctx context.Context, rq Request, nested bool, carried []store.Answer) (*Outcome, error) {
	wctx := context.WithoutCancel(ctx) // an interrupted turn still records how it ended
	if s.info.ID == "" {
		info, err := s.st.NewSession(wctx, s.env.Now(), sessionConfig(s.env, rq), "")
		if err != nil {
			return nil, execErr("sessions database: %v", err)
		}
		s.info = info
	}
	s.pending = nil // no longer the last turn
	rq.PreviousTurn = cmp.Or(rq.PreviousTurn, s.previousTurnLog(wctx))
	n, err := s.st.BeginTurn(wctx, s.info.ID, rq.Question, "", os.Getpid(), s.env.Now(), carried...)
	if err != nil {
		return nil, execErr("sessions database: %v", err)
	}
	s.last = n
	rec := &turnRecorder{st: s.st, session: s.info.ID, turn: n, ctx: wctx, carried: slices.Clone(carried)}
	rq.History = append(rq.History, s.history...)
	rq.Turn = &TurnLog{N: n, Nested: nested || s.info.LogDir != "", SessionDir: s.info.LogDir, Persist: rec.persist,
		// Recorded before the run starts, so that --continue after a kill
		// finds the turn's replay log.
		Opened: func(dir string) error {
			_, err := rec.failed(s.st.SetTurnLogDir(wctx, s.info.ID, n, dir))
			return err
		}}
	out, err := Execute(ctx, s.env, rq)
	if err != nil {
		if _, serr := rec.failed(s.st.FinishTurn(wctx, s.info.ID, n, store.TurnEnd{Status: "failed", Err: err.Error(), At: s.env.Now()})); serr != nil {
			err = fmt.Errorf("%w (and the turn's failure could not be recorded: %v)", err, serr)
		}
		return nil, err
	}
	// The store's failures after the run are the last of its warnings,
	// after its events: in the outcome, once (the run may have said it).
	warn := func(err error) {
		if first, err := rec.failed(err); first {
			line := event.Warning{Text: err.Error()}.Line()
			out.Warnings = append(out.Warnings, line)
			out.LateWarnings = append(out.LateWarnings, line)
		}
	}
	if out.LogDir != "" {
		warn(s.st.SetTurnLogDir(wctx, s.info.ID, n, out.LogDir))
		if s.info.LogDir == "" {
			s.info.LogDir = out.LogDir
			if rq.Turn.Nested {
				s.info.LogDir = filepath.Dir(out.LogDir)
			}
			warn(s.st.SetSessionLogDir(wctx, s.info.ID, s.info.LogDir))
		}
	}
	end := store.TurnEnd{Status: string(out.Status), Winner: out.Winner, WinnerLabel: rec.winner(), At: s.env.Now()}
	if out.Status == orchestrator.Completed {
		end.Final = out.Final
	}
	if out.Err != nil {
		end.Err = out.Err.Error()
	}
	for id, u := range out.Usage {
		end.Usage = append(end.Usage, store.Usage{Agent: id, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: out.Cost[id]})
	}
	warn(s.st.FinishTurn(wctx, s.info.ID, n, end))
	if end.Final != "" {
		s.history = append(s.history, llm.Message{Role: llm.RoleUser, Content: rq.Question}, llm.Message{Role: llm.RoleAssistant, Content: end.Final})
	}
	return out, nil
}

// sessionConfig is the config a session records, so that --continue
// without --config runs the same team: an @examples name as given, a file
// as an absolute path.
func sessionConfig(env *Env, rq Request) string {
	c := rq.Config
	if c == "" || strings.HasPrefix(c, "@") || filepath.IsAbs(c) {
		return c
	}
	return filepath.Join(env.WorkDir, c)
}

// turnRecorder writes a turn's accepted answers and votes to the store as
// the broker's durable sink: each is committed before any display or
// client is told of it, so an answer shown as accepted is stored, even if
// the process is killed the moment it is shown.
type turnRecorder struct {
	st      *store.Store
	session string
	turn    int
	ctx     context.Context
	// carried are the answers BeginTurn recorded with the turn (a resumed
	// one): the run accepts them again as it starts, and they are not
	// recorded twice.
	carried []store.Answer

	mu          sync.Mutex // persist runs on the publisher's goroutine
	winnerLabel string
	failures    int // store failures so far
}

// failed names err as the sessions database's (nil stays nil); first
// says it is the turn's first store failure, the one worth a warning.
func (r *turnRecorder) failed(err error) (first bool, _ error) {
	if err == nil {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	return r.failures == 1, fmt.Errorf("sessions database: %w", err)
}

// persist is the sink. A store failure is the run's warning (the turn
// goes on, and the event is shown all the same).
func (r *turnRecorder) persist(e event.Event) error {
	var err error
	switch e := e.(type) {
	case event.AnswerAccepted:
		if i := slices.IndexFunc(r.carried, func(a store.Answer) bool { return a.Agent == e.Agent && a.Content == e.Content }); i >= 0 {
			r.carried = slices.Delete(r.carried, i, i+1)
			break
		}
		err = r.st.AddAnswer(r.ctx, r.session, r.turn, store.Answer{Agent: e.Agent, Label: e.Label, Content: e.Content, At: e.Time})
	case event.VoteAccepted:
		err = r.st.AddVote(r.ctx, r.session, r.turn, store.Vote{Agent: e.Agent, Target: e.Target, TargetLabel: e.TargetAnswer, Reason: e.Reason, At: e.Time})
	case event.WinnerSelected:
		r.mu.Lock()
		r.winnerLabel = e.Label
		r.mu.Unlock()
	}
	_, err = r.failed(err)
	return err
}

// winner is the stable label of the winning answer, once selected.
func (r *turnRecorder) winner() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.winnerLabel
}
