package cli

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/store"
)

// A run killed with SIGKILL at a random point — while answers, votes or
// the presentation are under way — is finished by --continue from its
// replay log, and no agent is asked again for an answer or a vote it had
// given: the simulator runs in this test, so it sees every request of
// both processes. Each round kills after a randomly chosen progress line.
func TestKilledAtRandomPointsContinueCompletesWithoutAskingAgain(t *testing.T) {
	bin := buildMassgen(t)
	srv, url := simtest.Start(t, "defaults: {ttft_ms: 40, tokens_per_second: 400}\n")
	team := "agents:\n"
	for _, id := range []string{"a", "b", "c"} {
		team += fmt.Sprintf("  - {id: %s, backend: {type: chatcompletion, model: m-%s, base_url: %q}}\n", id, id, url)
	}
	progress := []string{" answered ", " voted for ", "  winner: ", " is writing the final answer"}
	rng := rand.New(rand.NewPCG(18, 2026))
	deadline := time.Now().Add(90 * time.Second)
	rounds, killed := 0, 0
	for ; rounds < 12 && time.Now().Before(deadline); rounds++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(team), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		run := func(args ...string) *exec.Cmd {
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Dir = dir
			cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
			return cmd
		}
		// Three answers, three votes, the winner, the presentation: kill
		// after one of those eight lines.
		killAt := 1 + rng.IntN(8)
		first := run("--config", "team.yaml", "What is the capital of France?")
		stderr, err := first.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		seen, shown := 0, []string{}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if slices.ContainsFunc(progress, func(p string) bool { return strings.Contains(line, p) }) {
				seen++
				shown = append(shown, line)
				if seen == killAt {
					first.Process.Kill() // SIGKILL: no cleanup at all
					break
				}
			}
		}
		go func() {
			for sc.Scan() { // drain what is left, so the process can end
			}
		}()
		_ = first.Wait()
		if seen < killAt {
			cancel()
			continue // the run ended before the chosen line: nothing to resume
		}
		killed++

		st, err := store.Open(ctx, store.DefaultPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := st.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		turns, err := st.Turns(ctx, sess.ID)
		if err != nil || len(turns) != 1 {
			t.Fatalf("round %d: turns %+v (%v)", rounds, turns, err)
		}
		seeds, votes, err := runlog.Carried(turns[0].LogDir)
		if err != nil {
			t.Fatalf("round %d: the killed run's replay log: %v", rounds, err)
		}
		// Every answer and vote the user was shown is in the log.
		for _, line := range shown {
			who := strings.Fields(line)[0]
			if strings.Contains(line, " answered ") && !slices.ContainsFunc(seeds, func(s coord.Seed) bool { return s.Agent == who }) {
				t.Errorf("round %d: %q was shown, but the log carries no answer of %s", rounds, line, who)
			}
		}
		before := len(srv.Requests())
		out, err := run("--continue").CombinedOutput()
		st.Close()
		if err != nil {
			t.Fatalf("round %d (killed after %q): --continue: %v\n%s", rounds, shown[len(shown)-1], err, out)
		}
		st, err = store.Open(ctx, store.DefaultPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		turns, err = st.Turns(ctx, sess.ID)
		st.Close()
		if err != nil || len(turns) != 2 || turns[1].Status != store.TurnCompleted || turns[1].Final == "" {
			t.Fatalf("round %d: after --continue: %+v (%v)\n%s", rounds, turns, err, out)
		}
		after := srv.Requests()[before:]
		for _, r := range after {
			id := strings.TrimPrefix(r.Model, "m-")
			if r.Step == "answer" && slices.ContainsFunc(seeds, func(s coord.Seed) bool { return s.Agent == id }) {
				t.Errorf("round %d: %s was asked for an answer again (its answer was carried)", rounds, id)
			}
		}
		// With no new answer after the resume, the carried votes stand:
		// their voters are not asked to vote again.
		if len(turns[1].Answers) == len(seeds) {
			for _, v := range votes {
				for _, r := range after {
					if r.Model == "m-"+v.Voter && (r.Step == "vote" || r.Step == "answer") {
						t.Errorf("round %d (killed after %q): %s was asked to vote again (request %d, %s)", rounds, shown[len(shown)-1], v.Voter, r.ID, r.Step)
					}
				}
			}
		}
		cancel()
	}
	t.Logf("%d rounds, %d killed mid-run and resumed", rounds, killed)
	if killed < rounds/2 {
		t.Errorf("only %d of %d rounds were killed mid-run: the kill points are not being reached", killed, rounds)
	}
}
