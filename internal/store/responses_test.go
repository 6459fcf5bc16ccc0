package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func resp(id string, at time.Time, items ...string) Response {
	r := Response{ID: id, Created: at, Input: json.RawMessage(`[{"in":"` + id + `"}]`),
		Output: json.RawMessage(`[{"out":"` + id + `"}]`), Object: json.RawMessage(`{"id":"` + id + `"}`)}
	for _, it := range items {
		r.Items = append(r.Items, ResponseItem{ID: it, Messages: json.RawMessage(`[{"role":"user","content":"` + it + `"}]`)})
	}
	return r
}

func TestResponsesAreKeptAcrossOpensAndDeleted(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	if _, err := s.PutResponse(ctx, resp("resp_1", t0, "msg_1", "msg_2"), ResponseLimits{}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := open(t, path) // another process, later
	r, err := s2.GetResponse(ctx, "resp_1")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Object) != `{"id":"resp_1"}` || string(r.Input) != `[{"in":"resp_1"}]` || string(r.Output) != `[{"out":"resp_1"}]` || !r.Created.Equal(t0) {
		t.Errorf("read back %+v", r)
	}
	m, err := s2.GetResponseItem(ctx, "msg_2")
	if err != nil || string(m) != `[{"role":"user","content":"msg_2"}]` {
		t.Errorf("item msg_2 = %s, %v", m, err)
	}
	if _, err := s2.GetResponse(ctx, "resp_nope"); !errors.Is(err, ErrNoResponse) {
		t.Errorf("unknown response: %v, want ErrNoResponse", err)
	}

	if err := s2.DeleteResponse(ctx, "resp_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.GetResponse(ctx, "resp_1"); !errors.Is(err, ErrNoResponse) {
		t.Errorf("deleted response still read: %v", err)
	}
	if _, err := s2.GetResponseItem(ctx, "msg_1"); !errors.Is(err, ErrNoResponse) {
		t.Errorf("a deleted response's item still read: %v", err)
	}
	if err := s2.DeleteResponse(ctx, "resp_1"); !errors.Is(err, ErrNoResponse) {
		t.Errorf("second delete: %v, want ErrNoResponse", err)
	}
}

func TestAnItemTakenOverByANewerResponseOutlivesTheOlder(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), FileName))
	for _, r := range []Response{resp("resp_1", t0, "msg_a"), resp("resp_2", t0.Add(time.Second), "msg_a")} {
		if _, err := s.PutResponse(ctx, r, ResponseLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteResponse(ctx, "resp_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetResponseItem(ctx, "msg_a"); err != nil {
		t.Errorf("msg_a, now resp_2's, went with resp_1: %v", err)
	}
}

func TestResponsesArePrunedByCountAgeAndSize(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), FileName))
	kept := func() []string {
		t.Helper()
		var ids []string
		rows, err := s.db.QueryContext(ctx, `SELECT id FROM responses ORDER BY created_at`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			_ = rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	put := func(i int, lim ResponseLimits) int {
		t.Helper()
		n, err := s.PutResponse(ctx, resp(fmt.Sprintf("resp_%d", i), t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("msg_%d", i)), lim)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := 1; i <= 5; i++ {
		put(i, ResponseLimits{Max: 3})
	}
	if got := fmt.Sprint(kept()); got != "[resp_3 resp_4 resp_5]" {
		t.Errorf("Max 3 kept %s", got)
	}
	if _, err := s.GetResponseItem(ctx, "msg_2"); !errors.Is(err, ErrNoResponse) {
		t.Errorf("a pruned response's item is still kept: %v", err)
	}
	// resp_6 comes 3 minutes after resp_3: an age of 150s leaves resp_4 on.
	if n := put(6, ResponseLimits{MaxAge: 150 * time.Second}); n != 1 {
		t.Errorf("MaxAge pruned %d, want 1 (resp_3)", n)
	}
	if got := fmt.Sprint(kept()); got != "[resp_4 resp_5 resp_6]" {
		t.Errorf("MaxAge kept %s", got)
	}
	one := resp("resp_7", t0, "msg_7").size()
	// Over 2.5 responses' weight: pruned to 90% of it, two responses.
	put(7, ResponseLimits{MaxBytes: 2*one + one/2})
	if got := fmt.Sprint(kept()); got != "[resp_6 resp_7]" {
		t.Errorf("MaxBytes of 2.5 responses kept %s", got)
	}
	// A bound smaller than one response still keeps the newest.
	put(8, ResponseLimits{MaxBytes: 1})
	if got := fmt.Sprint(kept()); got != "[resp_8]" {
		t.Errorf("MaxBytes 1 kept %s", got)
	}
	// Over a bound of 10, the table is pruned to 9, so the next put
	// prunes nothing.
	for i := 9; i <= 17; i++ { // with resp_8: 10
		put(i, ResponseLimits{Max: 10})
	}
	if n := put(18, ResponseLimits{Max: 10}); n != 2 || len(kept()) != 9 {
		t.Errorf("the 11th response pruned %d, leaving %d; want 2 pruned, 9 left", n, len(kept()))
	}
	if n := put(19, ResponseLimits{Max: 10}); n != 0 {
		t.Errorf("the put after a pruning pruned %d", n)
	}
}

func TestAVersion1DatabaseIsMigratedWithItsSessions(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	// A database as the first schema left it, with a session in it.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], "PRAGMA user_version = 1",
		`INSERT INTO sessions (id, created_at, updated_at) VALUES ('session_old', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z')`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := open(t, path)
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion() || v < 2 {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion())
	}
	if _, err := s.Session(ctx, "session_old"); err != nil {
		t.Errorf("the old session is gone: %v", err)
	}
	if _, err := s.PutResponse(ctx, resp("resp_1", t0), ResponseLimits{}); err != nil {
		t.Errorf("PutResponse on a migrated database: %v", err)
	}
}
