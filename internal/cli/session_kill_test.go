package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim/simtest"
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
// had accepted before the kill are in the store. --continue with a
// question marks turn two interrupted and leaves it out of the history;
// --continue without one finishes it from its accepted answer, which the
// simulator (running in this test, so it counts every process's requests)
// is never asked for again.
func TestKilledTurnLosesNothingAndContinueResumes(t *testing.T) {
	bin := buildMassgen(t)
	dir := t.TempDir()
	srv, url := simtest.Start(t, "models:\n  m-slow: {ttft_ms: 30000}\n")
	team := func(slowModel string) string {
		return fmt.Sprintf("agents:\n  - {id: quick, backend: {type: chatcompletion, model: m-quick, base_url: %q}}\n"+
			"  - {id: slow, backend: {type: chatcompletion, model: %s, base_url: %q}}\n", url, slowModel, url)
	}
	// Turn two's "slow" waits 30 s for its first token: the process is
	// killed after "quick" has answered.
	for name, body := range map[string]string{"one.yaml": team("m-later"), "two.yaml": team("m-slow")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		return cmd
	}
	if out, err := run("--config", "one.yaml", "First question").CombinedOutput(); err != nil {
		t.Fatalf("turn one: %v\n%s", err, out)
	}

	second := run("--continue", "--config", "two.yaml", "Second question")
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
	before := len(srv.Requests())

	// --continue with no question (stdin at EOF): turn two is finished
	// as turn three, from quick's accepted answer.
	out, err := run("--continue").CombinedOutput()
	if err != nil {
		t.Fatalf("resuming: %v\n%s", err, out)
	}
	for _, want := range []string{"turns [2] were interrupted", "resuming interrupted turn 2: Second question (its 1 accepted answers are kept"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--continue does not say %q:\n%s", want, out)
		}
	}
	for _, r := range srv.Requests()[before:] {
		if r.Model == "m-quick" && r.Step == "answer" {
			t.Errorf("quick was asked for an answer again (request %d)", r.ID)
		}
	}
	turns, err = st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || turns[1].Status != store.TurnInterrupted || len(turns[1].Answers) == 0 {
		t.Fatalf("turns after --continue: %+v", turns)
	}
	resumed := turns[2]
	if resumed.Question != "Second question" || resumed.Status != store.TurnCompleted || resumed.Winner == "" ||
		len(resumed.Answers) == 0 || resumed.Answers[0].Content != turns[1].Answers[0].Content {
		t.Fatalf("resumed turn: %+v", resumed)
	}
	if resumed.LogDir != filepath.Join(sess.LogDir, "turn_3") {
		t.Errorf("turn three logs in %s, want turn_3 of %s", resumed.LogDir, sess.LogDir)
	}
	c := contexts(t, resumed.LogDir)
	if !strings.Contains(c, "User: First question") || !strings.Contains(c, "Assistant: "+strings.SplitN(turns[0].Final, "\n", 2)[0]) {
		t.Errorf("turn three's prompt lacks turn one's history:\n%s", c)
	}
	if strings.Contains(c, "User: Second question") {
		t.Error("the interrupted turn, which has no answer, is in the history")
	}
	// --continue without --config ran the session's own config (turn
	// one's): no request went to the slow model.
	for _, r := range srv.Requests()[before:] {
		if r.Model == "m-slow" {
			t.Errorf("the resumed turn ran turn two's --config (request %d to m-slow)", r.ID)
		}
	}

	// A follow-up now sees turns one and three.
	out, err = run("--continue", "Third question").CombinedOutput()
	if err != nil {
		t.Fatalf("turn four: %v\n%s", err, out)
	}
	turns, _ = st.Turns(ctx, sess.ID)
	if c := contexts(t, turns[3].LogDir); !strings.Contains(c, "User: First question") || !strings.Contains(c, "User: Second question") {
		t.Errorf("turn four's history lacks a finished turn:\n%s", c)
	}
}
