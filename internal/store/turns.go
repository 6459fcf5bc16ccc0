package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/massgen/massgen/internal/redact"
)

// Turn statuses: running while a process works on it, then the run's own
// status (completed, failed, timeout, interrupted). A turn still running
// whose process is gone was interrupted by a crash or kill -9.
const (
	TurnRunning     = "running"
	TurnCompleted   = "completed"
	TurnInterrupted = "interrupted"
)

// Turn is one team run of a session.
type Turn struct {
	N           int
	Question    string
	Status      string
	Started     time.Time
	Ended       time.Time // zero while running
	Winner      string
	WinnerLabel string
	Final       string
	Err         string
	LogDir      string
	PID         int // the process that ran it
	Answers     []Answer
	Votes       []Vote
	Usage       []Usage
}

// Answer is an accepted answer.
type Answer struct {
	Agent   string
	Label   string // stable log label, agent<position>.<revision>
	Content string
	At      time.Time
}

// Vote is a counted vote.
type Vote struct {
	Agent       string
	Target      string // the agent voted for
	TargetLabel string // the label of the answer voted for
	Reason      string
	At          time.Time
}

// Usage is what one agent spent in a turn.
type Usage struct {
	Agent        string
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
}

// TurnEnd is how a turn ended.
type TurnEnd struct {
	Status      string
	Winner      string
	WinnerLabel string
	Final       string
	Err         string
	Usage       []Usage
	At          time.Time
}

// BeginTurn adds the session's next turn, running, and returns its number.
// carried are answers the turn starts with (a resumed turn carries those
// of the interrupted one it finishes): they are written in the same
// transaction as the turn, so no crash leaves the turn without them — a
// turn with none would make the next --continue ask every agent again.
func (s *Store) BeginTurn(ctx context.Context, session, question, logDir string, pid int, at time.Time, carried ...Answer) (int, error) {
	var n int
	err := s.tx(ctx, func(t *sql.Tx) error {
		if err := t.QueryRowContext(ctx, `SELECT COALESCE(MAX(n), 0) + 1 FROM turns WHERE session_id = ?`, session).Scan(&n); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO turns (session_id, n, question, status, started_at, log_dir, pid)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, session, n, question, TurnRunning, stamp(at), logDir, pid); err != nil {
			return err
		}
		if beginTurnHook != nil {
			beginTurnHook()
		}
		for i, a := range carried {
			if _, err := t.ExecContext(ctx, `INSERT INTO answers (session_id, turn, seq, agent, label, content, at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, session, n, i+1, a.Agent, a.Label, a.Content, stamp(a.At)); err != nil {
				return err
			}
		}
		_, err := t.ExecContext(ctx, `UPDATE sessions SET updated_at = ?, status = ? WHERE id = ?`, stamp(at), SessionActive, session)
		return err
	})
	return n, err
}

// beginTurnHook, when set (by tests), runs inside BeginTurn's transaction
// after the turn's row is written and before its carried answers are: a
// test kills the process there to show that the two commit together.
var beginTurnHook func()

// SetTurnLogDir records where a turn logs, once its directory exists.
func (s *Store) SetTurnLogDir(ctx context.Context, session string, turn int, logDir string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE turns SET log_dir = ? WHERE session_id = ? AND n = ?`, logDir, session, turn)
	return err
}

// AddAnswer records an accepted answer; each is committed on its own so
// that a crash loses none that was accepted.
func (s *Store) AddAnswer(ctx context.Context, session string, turn int, a Answer) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO answers (session_id, turn, seq, agent, label, content, at)
		VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM answers WHERE session_id = ? AND turn = ?), ?, ?, ?, ?)`,
		session, turn, session, turn, a.Agent, a.Label, a.Content, stamp(a.At))
	return err
}

// AddVote records a counted vote.
func (s *Store) AddVote(ctx context.Context, session string, turn int, v Vote) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO votes (session_id, turn, seq, agent, target, target_label, reason, at)
		VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM votes WHERE session_id = ? AND turn = ?), ?, ?, ?, ?, ?)`,
		session, turn, session, turn, v.Agent, v.Target, v.TargetLabel, v.Reason, stamp(v.At))
	return err
}

// FinishTurn records how a turn ended, with its usage, in one transaction.
// The error is stored with secrets masked (see package redact), as defence
// in depth: the text is masked where it was made already.
func (s *Store) FinishTurn(ctx context.Context, session string, turn int, e TurnEnd) error {
	return s.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `UPDATE turns SET status = ?, ended_at = ?, winner = ?, winner_label = ?, final_answer = ?, error = ?
			WHERE session_id = ? AND n = ?`, e.Status, stamp(e.At), e.Winner, e.WinnerLabel, e.Final, redact.String(e.Err), session, turn); err != nil {
			return err
		}
		for _, u := range e.Usage {
			if _, err := t.ExecContext(ctx, `INSERT INTO usage (session_id, turn, agent, input_tokens, output_tokens, cost_usd)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, turn, agent) DO UPDATE SET
				input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd`,
				session, turn, u.Agent, u.InputTokens, u.OutputTokens, u.CostUSD); err != nil {
				return err
			}
		}
		_, err := t.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, stamp(e.At), session)
		return err
	})
}

// MarkInterrupted turns the session's running turns whose process is gone
// (alive says which pids still run) into interrupted ones, and returns
// their numbers.
func (s *Store) MarkInterrupted(ctx context.Context, session string, alive func(pid int) bool, at time.Time) ([]int, error) {
	turns, err := s.Turns(ctx, session)
	if err != nil {
		return nil, err
	}
	var done []int
	for _, t := range turns {
		if t.Status != TurnRunning || alive(t.PID) {
			continue
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE turns SET status = ?, ended_at = ?, error = ? WHERE session_id = ? AND n = ? AND status = ?`,
			TurnInterrupted, stamp(at), "the process running it ended without finishing it", session, t.N, TurnRunning); err != nil {
			return done, err
		}
		done = append(done, t.N)
	}
	return done, nil
}

// Turns returns a session's turns in order, with their answers, votes and
// usage, read in one snapshot.
func (s *Store) Turns(ctx context.Context, session string) ([]Turn, error) {
	// A read transaction: one consistent snapshot of a session another
	// process may be writing. It is a plain BEGIN, so it never waits for
	// the write lock.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") //nolint:errcheck // read only
	var turns []Turn
	rows, err := conn.QueryContext(ctx, `SELECT n, question, status, started_at, ended_at, winner, winner_label, final_answer, error, log_dir, pid
		FROM turns WHERE session_id = ? ORDER BY n`, session)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t Turn
		var started, ended string
		if err := rows.Scan(&t.N, &t.Question, &t.Status, &started, &ended, &t.Winner, &t.WinnerLabel, &t.Final, &t.Err, &t.LogDir, &t.PID); err != nil {
			rows.Close()
			return nil, err
		}
		t.Started = parseStamp(started)
		if ended != "" {
			t.Ended = parseStamp(ended)
		}
		turns = append(turns, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	byN := map[int]*Turn{}
	for i := range turns {
		byN[turns[i].N] = &turns[i]
	}
	// each runs a query over the session's rows of one table; scan reads a
	// row's turn number and files the row under that turn.
	each := func(query string, scan func(rows *sql.Rows) error) error {
		rows, err := conn.QueryContext(ctx, query, session)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	err = each(`SELECT turn, agent, label, content, at FROM answers WHERE session_id = ? ORDER BY turn, seq`, func(rows *sql.Rows) error {
		var n int
		var a Answer
		var at string
		if err := rows.Scan(&n, &a.Agent, &a.Label, &a.Content, &at); err != nil {
			return err
		}
		a.At = parseStamp(at)
		if t := byN[n]; t != nil {
			t.Answers = append(t.Answers, a)
		}
		return nil
	})
	if err == nil {
		err = each(`SELECT turn, agent, target, target_label, reason, at FROM votes WHERE session_id = ? ORDER BY turn, seq`, func(rows *sql.Rows) error {
			var n int
			var v Vote
			var at string
			if err := rows.Scan(&n, &v.Agent, &v.Target, &v.TargetLabel, &v.Reason, &at); err != nil {
				return err
			}
			v.At = parseStamp(at)
			if t := byN[n]; t != nil {
				t.Votes = append(t.Votes, v)
			}
			return nil
		})
	}
	if err == nil {
		err = each(`SELECT turn, agent, input_tokens, output_tokens, cost_usd FROM usage WHERE session_id = ? ORDER BY turn, agent`, func(rows *sql.Rows) error {
			var n int
			var u Usage
			if err := rows.Scan(&n, &u.Agent, &u.InputTokens, &u.OutputTokens, &u.CostUSD); err != nil {
				return err
			}
			if t := byN[n]; t != nil {
				t.Usage = append(t.Usage, u)
			}
			return nil
		})
	}
	return turns, err
}

// Totals sums a turn's usage.
func (t Turn) Totals() Usage {
	var u Usage
	for _, x := range t.Usage {
		u.InputTokens += x.InputTokens
		u.OutputTokens += x.OutputTokens
		u.CostUSD += x.CostUSD
	}
	return u
}
