package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// The Responses massgen serve keeps, so that previous_response_id,
// item_reference and GET /v1/responses/{id} outlive the process. The store
// treats their contents as opaque JSON: internal/server decides what they
// hold.

// ErrNoResponse is returned for a response or an item that is not kept.
var ErrNoResponse = errors.New("no such response")

// Response is one kept Response.
type Response struct {
	ID      string
	Created time.Time
	// Input is the conversation the request resolved to (its input
	// items), Output its output items, Object the Response object as it
	// was sent: each as the server wrote it.
	Input, Output, Object json.RawMessage
	// Items are the ids of the input and output items that the response
	// keeps, with their contents, for item_reference.
	Items []ResponseItem
}

// ResponseItem is one kept item.
type ResponseItem struct {
	ID       string
	Messages json.RawMessage
}

// ResponseLimits bound the responses kept: after each PutResponse, every
// response older than MaxAge goes, and when more than Max remain or they
// weigh more than MaxBytes together, the oldest go until 90% of the bound
// is left. Zero: no bound.
type ResponseLimits struct {
	Max      int
	MaxBytes int64
	MaxAge   time.Duration
}

// size is what a response weighs against ResponseLimits.MaxBytes.
func (r Response) size() int64 {
	n := int64(len(r.Input) + len(r.Output) + len(r.Object))
	for _, it := range r.Items {
		n += int64(len(it.ID) + len(it.Messages))
	}
	return n
}

// PutResponse keeps r (replacing a response of the same id; an item id
// kept by an older response now points to r), then prunes to lim, in one
// transaction. It returns how many responses the pruning removed.
func (s *Store) PutResponse(ctx context.Context, r Response, lim ResponseLimits) (int, error) {
	var pruned int
	err := s.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `DELETE FROM responses WHERE id = ?`, r.ID); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO responses (id, created_at, input, output, object, size) VALUES (?, ?, ?, ?, ?, ?)`,
			r.ID, stamp(r.Created), string(r.Input), string(r.Output), string(r.Object), r.size()); err != nil {
			return err
		}
		for _, it := range r.Items {
			if _, err := t.ExecContext(ctx, `INSERT OR REPLACE INTO response_items (id, response_id, messages) VALUES (?, ?, ?)`,
				it.ID, r.ID, string(it.Messages)); err != nil {
				return err
			}
		}
		n, err := pruneResponses(ctx, t, lim, r.Created)
		pruned = n
		return err
	})
	return pruned, err
}

// pruneResponses applies lim, with now as the present. Over a bound, it
// prunes to 90% of it, so that a full table is pruned once every tenth of
// its bound rather than on every put. The newest response is never pruned
// by MaxBytes: a bound smaller than one response would keep none.
func pruneResponses(ctx context.Context, t *sql.Tx, lim ResponseLimits, now time.Time) (int, error) {
	var n int64
	del := func(q string, args ...any) error {
		res, err := t.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		n += k
		return nil
	}
	if lim.MaxAge > 0 {
		if err := del(`DELETE FROM responses WHERE created_at < ?`, stamp(now.Add(-lim.MaxAge))); err != nil {
			return 0, err
		}
	}
	if lim.Max <= 0 && lim.MaxBytes <= 0 {
		return int(n), nil
	}
	var count int
	var total int64
	if err := t.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM responses`).Scan(&count, &total); err != nil {
		return 0, err
	}
	if lim.Max > 0 && count > lim.Max {
		if err := del(`DELETE FROM responses WHERE rowid IN
			(SELECT rowid FROM responses ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`, lim.Max-lim.Max/10); err != nil {
			return 0, err
		}
	}
	if lim.MaxBytes > 0 && total > lim.MaxBytes {
		if err := del(`DELETE FROM responses WHERE rowid IN (SELECT rowid FROM
			(SELECT rowid, row_number() OVER w AS i, sum(size) OVER w AS total FROM responses
			 WINDOW w AS (ORDER BY created_at DESC, rowid DESC))
			WHERE i > 1 AND total > ?)`, lim.MaxBytes-lim.MaxBytes/10); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// GetResponse returns the kept response id (without its Items), or
// ErrNoResponse.
func (s *Store) GetResponse(ctx context.Context, id string) (Response, error) {
	r := Response{ID: id}
	var created, in, out, obj string
	err := s.db.QueryRowContext(ctx, `SELECT created_at, input, output, object FROM responses WHERE id = ?`, id).
		Scan(&created, &in, &out, &obj)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNoResponse
	}
	if err != nil {
		return r, err
	}
	r.Created, r.Input, r.Output, r.Object = parseStamp(created), json.RawMessage(in), json.RawMessage(out), json.RawMessage(obj)
	return r, nil
}

// GetResponseItem returns the contents of kept item id, or ErrNoResponse.
func (s *Store) GetResponseItem(ctx context.Context, id string) (json.RawMessage, error) {
	var m string
	err := s.db.QueryRowContext(ctx, `SELECT messages FROM response_items WHERE id = ?`, id).Scan(&m)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoResponse
	}
	return json.RawMessage(m), err
}

// DeleteResponse forgets response id and its items; ErrNoResponse when
// it was not kept.
func (s *Store) DeleteResponse(ctx context.Context, id string) error {
	return s.tx(ctx, func(t *sql.Tx) error {
		res, err := t.ExecContext(ctx, `DELETE FROM responses WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNoResponse
		}
		return nil
	})
}

// CountResponses is the number of kept responses.
func (s *Store) CountResponses(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM responses`).Scan(&n)
	return n, err
}
