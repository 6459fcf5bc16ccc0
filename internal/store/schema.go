package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes the schema from version i to i+1. Append only: a
// database written by this version must open in every later one.
var migrations = []string{
	`CREATE TABLE sessions (
		id          TEXT PRIMARY KEY,
		created_at  TEXT NOT NULL,
		updated_at  TEXT NOT NULL,
		status      TEXT NOT NULL DEFAULT 'active',
		config_path TEXT NOT NULL DEFAULT '',
		log_dir     TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE turns (
		session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		n             INTEGER NOT NULL,
		question      TEXT NOT NULL,
		status        TEXT NOT NULL DEFAULT 'running',
		started_at    TEXT NOT NULL,
		ended_at      TEXT NOT NULL DEFAULT '',
		winner        TEXT NOT NULL DEFAULT '',
		winner_label  TEXT NOT NULL DEFAULT '',
		final_answer  TEXT NOT NULL DEFAULT '',
		error         TEXT NOT NULL DEFAULT '',
		log_dir       TEXT NOT NULL DEFAULT '',
		pid           INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (session_id, n)
	);
	CREATE TABLE answers (
		session_id TEXT NOT NULL,
		turn       INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		agent      TEXT NOT NULL,
		label      TEXT NOT NULL,
		content    TEXT NOT NULL,
		at         TEXT NOT NULL,
		PRIMARY KEY (session_id, turn, seq),
		FOREIGN KEY (session_id, turn) REFERENCES turns(session_id, n) ON DELETE CASCADE
	);
	CREATE TABLE votes (
		session_id   TEXT NOT NULL,
		turn         INTEGER NOT NULL,
		seq          INTEGER NOT NULL,
		agent        TEXT NOT NULL,
		target       TEXT NOT NULL,
		target_label TEXT NOT NULL,
		reason       TEXT NOT NULL,
		at           TEXT NOT NULL,
		PRIMARY KEY (session_id, turn, seq),
		FOREIGN KEY (session_id, turn) REFERENCES turns(session_id, n) ON DELETE CASCADE
	);
	CREATE TABLE usage (
		session_id    TEXT NOT NULL,
		turn          INTEGER NOT NULL,
		agent         TEXT NOT NULL,
		input_tokens  INTEGER NOT NULL,
		output_tokens INTEGER NOT NULL,
		cost_usd      REAL NOT NULL,
		PRIMARY KEY (session_id, turn, agent),
		FOREIGN KEY (session_id, turn) REFERENCES turns(session_id, n) ON DELETE CASCADE
	);
	CREATE INDEX sessions_by_update ON sessions(updated_at);`,
	// 2: the Responses massgen serve keeps (responses.go).
	`CREATE TABLE responses (
		id         TEXT PRIMARY KEY,
		created_at TEXT NOT NULL,
		input      TEXT NOT NULL,
		output     TEXT NOT NULL,
		object     TEXT NOT NULL,
		size       INTEGER NOT NULL
	);
	-- created_at and size: pruning reads this index alone, not the rows.
	CREATE INDEX responses_by_age ON responses(created_at, size);
	CREATE TABLE response_items (
		id          TEXT PRIMARY KEY,
		response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
		messages    TEXT NOT NULL
	);
	CREATE INDEX response_items_by_response ON response_items(response_id);`,
	// 3: background Responses in flight (background.go), so that a
	// restarted massgen serve carries them on from their logs.
	`CREATE TABLE background_runs (
		id         TEXT PRIMARY KEY,
		created_at TEXT NOT NULL,
		request    TEXT NOT NULL,
		log_dirs   TEXT NOT NULL DEFAULT ''
	);`,
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to SchemaVersion in one write transaction, so
// two processes opening a new database at once apply each step once.
func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(t *sql.Tx) error {
		var v int
		if err := t.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this massgen knows (%d): upgrade massgen", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := t.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if v < len(migrations) {
			// PRAGMA takes no parameters; the value is our own integer.
			if _, err := t.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
				return err
			}
		}
		return nil
	})
}
