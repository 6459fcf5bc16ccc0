package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
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
	if err := s.opening(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sessions database %s: %w", path, err)
	}
	return s, nil
}

// opening migrates the schema on the first connection. Where several
// processes open a new database at once, SQLite may answer SQLITE_BUSY
// straight away, without waiting on the busy timeout (switching to WAL
// needs a lock no handler waits for), so the open is tried again, for as
// long as a statement would wait.
func (s *Store) opening(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrate(ctx)
		var coded interface{ Code() int }
		if err == nil || !errors.As(err, &coded) || coded.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)))):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of a locked database.
const sqliteBusy = 5

// sqliteFull is SQLITE_FULL: "database or disk is full".
const sqliteFull = 13

// IsFull reports whether err is SQLite's "database or disk is full" (or
// the disk's own ENOSPC): the write was not kept for want of space.
func IsFull(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code()&0xff == sqliteFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
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
