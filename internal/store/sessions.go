package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Session statuses. A session is active while a process may add turns,
// closed once its interactive loop ended.
const (
	SessionActive = "active"
	SessionClosed = "closed"
)

// Session is one conversation.
type Session struct {
	ID         string
	Created    time.Time
	Updated    time.Time
	Status     string
	ConfigPath string
	LogDir     string // the session's log directory; turns log in turn_<N>/ inside it
	// Filled by Sessions and Session: the number of turns and the first
	// turn's question (what the session is about).
	Turns int
	Title string
}

// NewSession creates a session with an id of upstream's shape,
// session_YYYYMMDD_HHMMSS (suffixed _2, _3… when another session took it).
func (s *Store) NewSession(ctx context.Context, at time.Time, configPath, logDir string) (Session, error) {
	base := "session_" + at.Format("20060102_150405")
	sess := Session{Created: at, Updated: at, Status: SessionActive, ConfigPath: configPath, LogDir: logDir}
	err := s.tx(ctx, func(t *sql.Tx) error {
		for i := 1; ; i++ {
			id := base
			if i > 1 {
				id = fmt.Sprintf("%s_%d", base, i)
			}
			res, err := t.ExecContext(ctx, `INSERT INTO sessions (id, created_at, updated_at, status, config_path, log_dir)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, id, stamp(at), stamp(at), SessionActive, configPath, logDir)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				sess.ID = id
				return nil
			}
		}
	})
	return sess, err
}

// SetSessionLogDir records the session's log directory (known once its
// first turn has created it).
func (s *Store) SetSessionLogDir(ctx context.Context, id, logDir string) error {
	return s.exec1(ctx, `UPDATE sessions SET log_dir = ? WHERE id = ?`, logDir, id)
}

// SetSessionStatus records that a session is active again or closed.
func (s *Store) SetSessionStatus(ctx context.Context, id, status string, at time.Time) error {
	return s.exec1(ctx, `UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?`, status, stamp(at), id)
}

// exec1 runs a statement that must change exactly one session's row.
func (s *Store) exec1(ctx context.Context, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %v", ErrNotFound, args[len(args)-1])
	}
	return nil
}

const sessionColumns = `s.id, s.created_at, s.updated_at, s.status, s.config_path, s.log_dir,
	(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id),
	COALESCE((SELECT question FROM turns t WHERE t.session_id = s.id ORDER BY n LIMIT 1), '')`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var x Session
	var created, updated string
	err := row.Scan(&x.ID, &created, &updated, &x.Status, &x.ConfigPath, &x.LogDir, &x.Turns, &x.Title)
	x.Created, x.Updated = parseStamp(created), parseStamp(updated)
	return x, err
}

// Session returns the session id.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	x, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions s WHERE s.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return x, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return x, err
}

// Latest returns the most recently updated session.
func (s *Store) Latest(ctx context.Context) (Session, error) {
	all, err := s.Sessions(ctx, 1)
	if err != nil {
		return Session{}, err
	}
	if len(all) == 0 {
		return Session{}, fmt.Errorf("%w: there are no sessions yet", ErrNotFound)
	}
	return all[0], nil
}

// Sessions lists sessions, most recently updated first; limit <= 0 lists
// them all.
func (s *Store) Sessions(ctx context.Context, limit int) ([]Session, error) {
	q := `SELECT ` + sessionColumns + ` FROM sessions s ORDER BY s.updated_at DESC, s.id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		x, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// DeleteSession removes a session and all its turns (not its logs).
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM sessions WHERE id = ?`, id)
}

// Resolve finds a session by its id or by an unambiguous prefix of it.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (Session, error) {
	x, err := s.Session(ctx, idOrPrefix)
	if !errors.Is(err, ErrNotFound) {
		return x, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM sessions WHERE substr(id, 1, ?) = ?`, len(idOrPrefix), idOrPrefix)
	if err != nil {
		return Session{}, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return Session{}, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	switch len(ids) {
	case 0:
		return Session{}, fmt.Errorf("%w: %s", ErrNotFound, idOrPrefix)
	case 1:
		return s.Session(ctx, ids[0])
	}
	return Session{}, fmt.Errorf("%q matches several sessions: %s", idOrPrefix, strings.Join(ids, ", "))
}
