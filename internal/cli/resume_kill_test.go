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

// --continue writes the turn that finishes an interrupted one together with
// the answers it carries over. The test kills the resuming process (SIGKILL)
// the moment its new turn is visible in the database, which is before the
// run has started, let alone accepted anything: the new turn has the
// carried answers all the same, and the next --continue resumes from them
// without asking their agents again.
func TestAResumedTurnKilledAsItBeginsKeepsTheAnswersItCarries(t *testing.T) {
	bin := buildMassgen(t)
	dir := t.TempDir()
	srv, url := simtest.Start(t, "models:\n  m-slow: {ttft_ms: 30000}\n")
	team := func(third string) string {
		var b strings.Builder
		b.WriteString("agents:\n")
		for _, a := range [][2]string{{"quick", "m-quick"}, {"other", "m-other"}, {"third", third}} {
			fmt.Fprintf(&b, "  - {id: %s, backend: {type: chatcompletion, model: %s, base_url: %q}}\n", a[0], a[1], url)
		}
		return b.String()
	}
	for name, body := range map[string]string{"slow.yaml": team("m-slow"), "fast.yaml": team("m-third")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// What a process killed mid-turn leaves: a running turn of a process
	// that is gone, with the two answers it had accepted.
	st, err := store.Open(ctx, store.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	sess, err := st.NewSession(ctx, time.Now(), filepath.Join(dir, "slow.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.BeginTurn(ctx, sess.ID, "What is 2+2?", "", gone.ProcessState.Pid(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	carried := []store.Answer{
		{Agent: "quick", Label: "agent1.1", Content: "Four, from quick.", At: time.Now()},
		{Agent: "other", Label: "agent2.1", Content: "4, says other.", At: time.Now()},
	}
	for _, a := range carried {
		if err := st.AddAnswer(ctx, sess.ID, n, a); err != nil {
			t.Fatal(err)
		}
	}

	run := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		return cmd
	}
	resume := run("--continue") // no question, stdin at EOF: finish the interrupted turn
	var stderr strings.Builder
	resume.Stderr = &stderr
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it as soon as its turn exists, polling as fast as the database
	// answers: well inside the window before the run accepts anything.
	var seen []store.Turn
	for len(seen) < 2 {
		if seen, err = st.Turns(ctx, sess.ID); err != nil {
			resume.Process.Kill()
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			resume.Process.Kill()
			t.Fatalf("the resumed turn never began: %v\n%s", ctx.Err(), stderr.String())
		}
		time.Sleep(time.Millisecond) // the window is 10–20 ms wide
	}
	if err := resume.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = resume.Wait()
	if got := len(seen[1].Answers); got < len(carried) {
		t.Fatalf("the resumed turn was visible with %d answers; want the %d it carries from its first moment", got, len(carried))
	}
	turns, err := st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || !sameAnswers(turns[1].Answers, carried) {
		t.Fatalf("after the kill: %+v; want turn 2 with the carried answers %+v", turns, carried)
	}

	// The next --continue resumes turn 2 (now interrupted) from the same
	// answers: quick and other are not asked to answer again.
	before := len(srv.Requests())
	out, err := run("--continue", "--config", "fast.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("resuming again: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "its 2 accepted answers are kept") {
		t.Errorf("--continue does not resume from the 2 carried answers:\n%s", out)
	}
	for _, r := range srv.Requests()[before:] {
		if (r.Model == "m-quick" || r.Model == "m-other") && r.Step == "answer" {
			t.Errorf("%s was asked for an answer again (request %d)", r.Model, r.ID)
		}
	}
	turns, err = st.Turns(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || turns[1].Status != store.TurnInterrupted || turns[2].Status != store.TurnCompleted {
		t.Fatalf("turns after the second --continue: %+v", turns)
	}
	// The finished turn holds each carried answer once (written with the
	// turn, not again when the run accepted it), then its own.
	if got := turns[2].Answers; len(got) < 2 || !sameAnswers(got[:2], carried) || countAgent(got, "quick") != 1 || countAgent(got, "other") != 1 {
		t.Errorf("the finished turn's answers: %+v; want the carried ones once each first", got)
	}
}

// sameAnswers compares answers by agent, label and content.
func sameAnswers(got, want []store.Answer) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Agent != want[i].Agent || got[i].Label != want[i].Label || got[i].Content != want[i].Content {
			return false
		}
	}
	return true
}

func countAgent(as []store.Answer, agent string) int {
	n := 0
	for _, a := range as {
		if a.Agent == agent {
			n++
		}
	}
	return n
}
