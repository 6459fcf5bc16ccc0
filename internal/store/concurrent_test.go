package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// hammer is one writer's load: its own session, turns answers and votes
// committed one by one as a run does, and a full read of the session after
// every turn (readers and writers interleave).
const hammerTurns, hammerAnswers, hammerVotes = 25, 4, 3

func hammer(ctx context.Context, s *Store, who string) error {
	sess, err := s.NewSession(ctx, t0, who, "")
	if err != nil {
		return fmt.Errorf("%s: NewSession: %w", who, err)
	}
	for i := 0; i < hammerTurns; i++ {
		n, err := s.BeginTurn(ctx, sess.ID, fmt.Sprintf("%s question %d", who, i), "", os.Getpid(), time.Now())
		if err != nil {
			return fmt.Errorf("%s: BeginTurn: %w", who, err)
		}
		for j := 0; j < hammerAnswers; j++ {
			if err := s.AddAnswer(ctx, sess.ID, n, Answer{Agent: who, Label: fmt.Sprintf("agent1.%d", j+1), Content: "x", At: time.Now()}); err != nil {
				return fmt.Errorf("%s: AddAnswer: %w", who, err)
			}
		}
		for j := 0; j < hammerVotes; j++ {
			if err := s.AddVote(ctx, sess.ID, n, Vote{Agent: who, Target: who, TargetLabel: "agent1.1", At: time.Now()}); err != nil {
				return fmt.Errorf("%s: AddVote: %w", who, err)
			}
		}
		if err := s.FinishTurn(ctx, sess.ID, n, TurnEnd{Status: TurnCompleted, Winner: who, At: time.Now(),
			Usage: []Usage{{Agent: who, InputTokens: 1, OutputTokens: 1}}}); err != nil {
			return fmt.Errorf("%s: FinishTurn: %w", who, err)
		}
		if _, err := s.Turns(ctx, sess.ID); err != nil {
			return fmt.Errorf("%s: Turns: %w", who, err)
		}
		if _, err := s.Sessions(ctx, 10); err != nil {
			return fmt.Errorf("%s: Sessions: %w", who, err)
		}
	}
	return nil
}

// TestHammerChild is the body of a child process of
// TestConcurrentProcessesShareTheStore; alone it does nothing.
func TestHammerChild(t *testing.T) {
	path := os.Getenv("MASSGEN_STORE_HAMMER")
	if path == "" {
		t.Skip("runs as a child process of TestConcurrentProcessesShareTheStore")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := hammer(ctx, s, os.Getenv("MASSGEN_STORE_WHO")); err != nil {
		t.Fatal(err)
	}
}

// Two processes and two handles in this one (separate *sql.DB, so separate
// connections and locks) write to a database none of them created first:
// every write lands, none fails with "database is locked", and SQLite's
// integrity check passes. The load is a fixed amount of work under a
// deadline, not a timed loop.
func TestConcurrentProcessesShareTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), ".massgen", FileName)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	writers := []string{"proc1", "proc2", "handle1", "handle2"}
	errs := make(chan error, len(writers))
	var wg sync.WaitGroup
	for _, who := range writers[:2] {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHammerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MASSGEN_STORE_HAMMER="+path, "MASSGEN_STORE_WHO="+who)
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%s: %v\n%s", who, err, out)
			}
		})
	}
	for _, who := range writers[2:] {
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			if err := hammer(ctx, s, who); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := open(t, path)
	var check string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	list, err := s.Sessions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(writers) {
		t.Fatalf("%d sessions, want %d", len(list), len(writers))
	}
	for _, sess := range list {
		turns, err := s.Turns(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) != hammerTurns {
			t.Errorf("%s (%s): %d turns, want %d", sess.ID, sess.ConfigPath, len(turns), hammerTurns)
		}
		for _, tr := range turns {
			if len(tr.Answers) != hammerAnswers || len(tr.Votes) != hammerVotes || tr.Status != TurnCompleted || len(tr.Usage) != 1 {
				t.Errorf("%s turn %d: %d answers, %d votes, %s", sess.ID, tr.N, len(tr.Answers), len(tr.Votes), tr.Status)
			}
		}
	}
}
