package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Background runs are the Responses massgen serve runs with background:
// true, from the moment it accepts one until it has stored its outcome.
// A server that stops (or is killed) with some in flight finds them here
// when it starts again and carries each on from its log. The request is
// opaque JSON: internal/server decides what it holds.

// BackgroundRun is one background run in flight.
type BackgroundRun struct {
	ID      string
	Created time.Time
	Request json.RawMessage
	// LogDirs are the log directories of its attempts so far, oldest
	// first: a resumed attempt writes a new one, and the one to carry on
	// from is the one whose log holds the most (a process killed before
	// its new log held anything leaves the older one the better).
	LogDirs []string
}

// PutBackground records a background run accepted (replacing one of the
// same id).
func (s *Store) PutBackground(ctx context.Context, r BackgroundRun) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO background_runs (id, created_at, request, log_dirs) VALUES (?, ?, ?, ?)`,
		r.ID, stamp(r.Created), string(r.Request), strings.Join(r.LogDirs, "\n"))
	return err
}

// AddBackgroundLogDir appends the log directory of a new attempt of run id.
func (s *Store) AddBackgroundLogDir(ctx context.Context, id, dir string) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE background_runs SET log_dirs = CASE log_dirs WHEN '' THEN ? ELSE log_dirs || char(10) || ? END WHERE id = ?`, dir, dir, id)
	return err
}

// EndBackground forgets run id: its outcome is stored, or it was
// cancelled. Forgetting a run that is not recorded is not an error.
func (s *Store) EndBackground(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM background_runs WHERE id = ?`, id)
	return err
}

// BackgroundRuns are the background runs in flight, oldest first.
func (s *Store) BackgroundRuns(ctx context.Context) ([]BackgroundRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created_at, request, log_dirs FROM background_runs ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BackgroundRun
	for rows.Next() {
		var id, created, req, dirs string
		if err := rows.Scan(&id, &created, &req, &dirs); err != nil {
			return nil, err
		}
		r := BackgroundRun{ID: id, Created: parseStamp(created), Request: json.RawMessage(req)}
		if dirs != "" {
			r.LogDirs = strings.Split(dirs, "\n")
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
