package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// FileName is the database's name inside the .massgen directory.
const FileName = "sessions.db"

// busyTimeout is how long a statement waits for another process's write
// lock before failing. Turns write a few small rows at a time, so a long
// wait means something is stuck, not busy.
const busyTimeout = 30 * time.Second

// ErrNotFound is returned for a session that does not exist.
var ErrNotFound = errors.New("no such session")

// Store is an open sessions database. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
}

// DefaultPath is the database of the sessions run in workDir.
func DefaultPath(workDir string) string {
	return filepath.Join(workDir, ".massgen", FileName)
}

// Open opens (creating it and its directory when needed) the database at
// path and migrates its schema to the current version.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("sessions database: %w", err)
	}
	// busy_timeout comes first: switching to WAL needs a lock that another
	// process may hold at this very moment.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sessions database %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sessions database %s: %w", path, err)
	}
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// tx runs fn in a write transaction (BEGIN IMMEDIATE: see the package doc).
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	t, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(t); err != nil {
		_ = t.Rollback()
		return err
	}
	return t.Commit()
}

// stamp is how times are stored: RFC 3339 in UTC with nanoseconds, which
// sorts as text.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
