package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTurnsAreRecordedAsTheyGoAndReadBack(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), ".massgen", FileName)
	s := open(t, path)
	sess, err := s.NewSession(ctx, t0, "cfg.yaml", "/logs/log_1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.ID != "session_20261203_020000" {
		t.Errorf("id = %q, want upstream's shape session_YYYYMMDD_HHMMSS", sess.ID)
	}
	n, err := s.BeginTurn(ctx, sess.ID, "What is 2+2?", "/logs/log_1/turn_1", 42, t0)
	if err != nil || n != 1 {
		t.Fatalf("BeginTurn = %d, %v", n, err)
	}
	a1 := Answer{Agent: "a", Label: "agent1.1", Content: "4", At: t0.Add(time.Second)}
	a2 := Answer{Agent: "b", Label: "agent2.1", Content: "four", At: t0.Add(2 * time.Second)}
	v1 := Vote{Agent: "a", Target: "b", TargetLabel: "agent2.1", Reason: "words", At: t0.Add(3 * time.Second)}
	for _, a := range []Answer{a1, a2} {
		if err := s.AddAnswer(ctx, sess.ID, n, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddVote(ctx, sess.ID, n, v1); err != nil {
		t.Fatal(err)
	}

	// What a crash leaves: a second handle (another process) sees the
	// accepted answers of the running turn.
	other := open(t, path)
	turns, err := other.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].Status != TurnRunning || len(turns[0].Answers) != 2 || len(turns[0].Votes) != 1 {
		t.Fatalf("mid-turn read = %+v", turns)
	}

	end := TurnEnd{Status: TurnCompleted, Winner: "b", WinnerLabel: "agent2.1", Final: "Four.", At: t0.Add(5 * time.Second),
		Usage: []Usage{{Agent: "a", InputTokens: 10, OutputTokens: 5, CostUSD: 0.01}, {Agent: "b", InputTokens: 20, OutputTokens: 7, CostUSD: 0.02}}}
	if err := s.FinishTurn(ctx, sess.ID, n, end); err != nil {
		t.Fatal(err)
	}
	n2, err := s.BeginTurn(ctx, sess.ID, "And 3+3?", "/logs/log_1/turn_2", 42, t0.Add(time.Minute))
	if err != nil || n2 != 2 {
		t.Fatalf("second BeginTurn = %d, %v", n2, err)
	}
	turns, err = other.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []Turn{{N: 1, Question: "What is 2+2?", Status: TurnCompleted, Started: t0, Ended: end.At, Winner: "b", WinnerLabel: "agent2.1",
		Final: "Four.", LogDir: "/logs/log_1/turn_1", PID: 42, Answers: []Answer{a1, a2}, Votes: []Vote{v1}, Usage: end.Usage},
		{N: 2, Question: "And 3+3?", Status: TurnRunning, Started: t0.Add(time.Minute), LogDir: "/logs/log_1/turn_2", PID: 42}}
	if d := cmp.Diff(want, turns, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if tot := turns[0].Totals(); tot.InputTokens != 30 || tot.OutputTokens != 12 {
		t.Errorf("totals = %+v", tot)
	}

	got, err := s.Session(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != 2 || got.Title != "What is 2+2?" || got.LogDir != "/logs/log_1" || !got.Updated.Equal(t0.Add(time.Minute)) {
		t.Errorf("session = %+v", got)
	}

	// The process of turn 2 died: resuming marks it interrupted, once.
	marked, err := s.MarkInterrupted(ctx, sess.ID, func(pid int) bool { return false }, t0.Add(2*time.Minute))
	if err != nil || !cmp.Equal(marked, []int{2}) {
		t.Fatalf("MarkInterrupted = %v, %v", marked, err)
	}
	if marked, _ := s.MarkInterrupted(ctx, sess.ID, func(int) bool { return false }, t0); len(marked) != 0 {
		t.Errorf("second MarkInterrupted = %v", marked)
	}
}

func TestRunningTurnOfALiveProcessIsNotMarkedInterrupted(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), FileName))
	sess, _ := s.NewSession(ctx, t0, "", "")
	if _, err := s.BeginTurn(ctx, sess.ID, "q", "", 7, t0); err != nil {
		t.Fatal(err)
	}
	marked, err := s.MarkInterrupted(ctx, sess.ID, func(pid int) bool { return pid == 7 }, t0)
	if err != nil || len(marked) != 0 {
		t.Fatalf("MarkInterrupted = %v, %v", marked, err)
	}
	turns, _ := s.Turns(ctx, sess.ID)
	if turns[0].Status != TurnRunning {
		t.Errorf("status = %s", turns[0].Status)
	}
}

func TestSessionsListNewestFirstResolveAndDelete(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), FileName))
	if _, err := s.Latest(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest on an empty store = %v", err)
	}
	a, _ := s.NewSession(ctx, t0, "", "")
	b, _ := s.NewSession(ctx, t0, "", "") // same second: suffixed
	c, _ := s.NewSession(ctx, t0.Add(time.Hour), "", "")
	if b.ID != a.ID+"_2" {
		t.Errorf("second id in the same second = %q", b.ID)
	}
	// A turn in a makes it the most recent.
	if _, err := s.BeginTurn(ctx, a.ID, "q", "", 1, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	list, err := s.Sessions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if d := cmp.Diff([]string{a.ID, c.ID, b.ID}, ids); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if l, _ := s.Latest(ctx); l.ID != a.ID {
		t.Errorf("Latest = %s", l.ID)
	}
	if list, _ := s.Sessions(ctx, 2); len(list) != 2 {
		t.Errorf("limit 2 gave %d", len(list))
	}
	if x, err := s.Resolve(ctx, c.ID[:len("session_20261203_03")]); err != nil || x.ID != c.ID {
		t.Errorf("Resolve(prefix) = %v, %v", x.ID, err)
	}
	if _, err := s.Resolve(ctx, "session_2026"); err == nil {
		t.Error("an ambiguous prefix resolved")
	}
	if err := s.DeleteSession(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session: %v", err)
	}
	if turns, _ := s.Turns(ctx, a.ID); len(turns) != 0 {
		t.Errorf("deleted session's turns remain: %+v", turns)
	}
	if err := s.DeleteSession(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete = %v", err)
	}
}

func TestSchemaIsVersionedAndANewerOneIsRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion())
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	sess, _ := s.NewSession(ctx, t0, "", "")
	s.Close()
	// Reopening migrates nothing and keeps the data.
	s2 := open(t, path)
	if _, err := s2.Session(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.db.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := Open(ctx, path); err == nil {
		t.Fatal("a database from a newer massgen opened")
	}
}

func TestOpenCreatesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, DefaultPath(dir))
	if s.Path() != filepath.Join(dir, ".massgen", "sessions.db") {
		t.Errorf("path = %s", s.Path())
	}
}
