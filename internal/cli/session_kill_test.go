package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/store"
)

// buildMassgen builds the real binary once per test that needs a process
// to kill.
func buildMassgen(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and kills the massgen binary")
	}
	bin := filepath.Join(t.TempDir(), "massgen")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/massgen/massgen/cmd/massgen").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// A session survives kill -9: turn one (finished) and the answer turn two
// had accepted before the kill are in the store; --continue marks turn two
// interrupted, and the next turn sees turn one — and only it — as history.
func TestKilledTurnLosesNothingAndContinueResumes(t *testing.T) {
	bin := buildMassgen(t)
	dir := t.TempDir()
	// In turn two, "quick" answers at once and "slow" waits 30 s for its
	// first token: the process is killed in between.
	slow := "agents:\n" +
		"  - {id: quick, backend: {type: sim, model: sim-quick, ttft_ms: 5, tokens_per_second: 5000}}\n" +
		"  - {id: slow, backend: {type: sim, model: sim-slow, ttft_ms: 30000, tokens_per_second: 5}}\n"
	if err := os.WriteFile(filepath.Join(dir, "slow.yaml"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		return cmd
	}
	if out, err := run("--config", "@examples/sim_single_agent", "First question").CombinedOutput(); err != nil {
		t.Fatalf("turn one: %v\n%s", err, out)
	}

	second := run("--continue", "--config", "slow.yaml", "Second question")
	var stderr strings.Builder
	second.Stderr = &stderr
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := st.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Wait (bounded by ctx) for turn two's first accepted answer.
	for {
		turns, err := st.Turns(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) == 2 && len(turns[1].Answers) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			second.Process.Kill()
			t.Fatalf("turn two accepted no answer: %v\n%s", ctx.Err(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := second.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
		t.Fatal(err)
	}
	_ = second.Wait()

	turns, err := st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if turns[0].Status != store.TurnCompleted || turns[1].Status != store.TurnRunning || turns[1].Answers[0].Agent != "quick" {
		t.Fatalf("after kill -9: turn one %s, turn two %s with answers %+v", turns[0].Status, turns[1].Status, turns[1].Answers)
	}

	third := run("--continue", "Third question")
	out, err := third.CombinedOutput()
	if err != nil {
		t.Fatalf("turn three: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "turns [2] were interrupted") {
		t.Errorf("--continue does not say turn two was interrupted:\n%s", out)
	}
	turns, err = st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || turns[1].Status != store.TurnInterrupted || len(turns[1].Answers) == 0 || turns[2].Status != store.TurnCompleted {
		t.Fatalf("turns after --continue: %+v", turns)
	}
	if turns[2].LogDir != filepath.Join(sess.LogDir, "turn_3") {
		t.Errorf("turn three logs in %s, want turn_3 of %s", turns[2].LogDir, sess.LogDir)
	}
	c := contexts(t, turns[2].LogDir)
	if !strings.Contains(c, "User: First question") || !strings.Contains(c, "Assistant: "+strings.SplitN(turns[0].Final, "\n", 2)[0]) {
		t.Errorf("turn three's prompt lacks turn one's history:\n%s", c)
	}
	if strings.Contains(c, "Second question") {
		t.Error("turn three's history has the interrupted turn, which has no answer")
	}
	// --continue without --config ran the session's own config (turn one's).
	if turns[2].Winner != "solo" || len(turns[2].Usage) != 1 {
		t.Errorf("turn three ran another team than the session's: winner %q, usage %+v", turns[2].Winner, turns[2].Usage)
	}
}
