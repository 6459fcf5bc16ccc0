package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// crashDBEnv names the database a child test process crashes in.
const crashDBEnv = "MASSGEN_STORE_TEST_CRASH_DB"

// interruptedSession makes a session whose one turn was interrupted with
// two accepted answers: what --continue finishes.
func interruptedSession(t *testing.T, s *Store) (string, []Answer) {
	t.Helper()
	ctx := t.Context()
	sess, err := s.NewSession(ctx, t0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.BeginTurn(ctx, sess.ID, "What is 2+2?", "", 1, t0)
	if err != nil {
		t.Fatal(err)
	}
	answers := []Answer{
		{Agent: "a", Label: "agent1.1", Content: "4", At: t0.Add(time.Second)},
		{Agent: "b", Label: "agent2.1", Content: "four", At: t0.Add(2 * time.Second)},
	}
	for _, a := range answers {
		if err := s.AddAnswer(ctx, sess.ID, n, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.MarkInterrupted(ctx, sess.ID, func(int) bool { return false }, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	return sess.ID, answers
}

// A resumed turn is written with the answers it carries over, in one
// transaction: later answers of the turn follow them.
func TestAResumedTurnIsWrittenWithTheAnswersItCarries(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), FileName))
	id, carried := interruptedSession(t, s)
	n, err := s.BeginTurn(ctx, id, "What is 2+2?", "", 2, t0.Add(2*time.Minute), carried...)
	if err != nil || n != 2 {
		t.Fatalf("BeginTurn = %d, %v", n, err)
	}
	later := Answer{Agent: "a", Label: "agent1.2", Content: "4, surely", At: t0.Add(3 * time.Minute)}
	if err := s.AddAnswer(ctx, id, n, later); err != nil {
		t.Fatal(err)
	}
	turns, err := s.Turns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(append(carried[:2:2], later), turns[1].Answers, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the resumed turn's answers (-want +got):\n%s", d)
	}
}

// A process killed while it writes the resumed turn (after the turn's row,
// before the answers it carries) leaves no turn without them: the
// interrupted turn is still the session's last, with its answers, so the
// next --continue resumes it again rather than asking every agent anew.
func TestAKillWhileAResumedTurnBeginsLeavesNoTurnWithoutItsAnswers(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	s := open(t, path)
	id, carried := interruptedSession(t, s)

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashInBeginTurnHelper$")
	child.Env = append(os.Environ(), crashDBEnv+"="+path)
	out, err := child.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was to be killed inside BeginTurn; it ended with %v:\n%s", err, out)
	}

	turns, err := s.Turns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	last := turns[len(turns)-1]
	if len(last.Answers) < len(carried) {
		t.Fatalf("after the kill the last turn (%d, %s) has %d answers, want the %d it carried: %+v",
			last.N, last.Status, len(last.Answers), len(carried), turns)
	}
	if len(turns) != 1 || last.Status != TurnInterrupted {
		t.Errorf("turns after the kill: %+v; want the interrupted turn alone (the new one was never committed)", turns)
	}
}

// TestCrashInBeginTurnHelper is the child process of the test above: it
// begins a resumed turn and is killed (SIGKILL, no cleanup) between the
// turn's row and its carried answers.
func TestCrashInBeginTurnHelper(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("the child process of TestAKillWhileAResumedTurnBeginsLeavesNoTurnWithoutItsAnswers")
	}
	ctx := t.Context()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := s.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	beginTurnHook = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	_, err = s.BeginTurn(ctx, sess.ID, turns[0].Question, "", os.Getpid(), time.Now(), turns[0].Answers...)
	t.Fatalf("BeginTurn returned (%v): the hook did not kill the process", err)
}
