package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/store"
)

// answeredLine is the plain display's line for an accepted answer
// (event.Describe): "  <agent> answered <label> (shown as …): …".
var answeredLine = regexp.MustCompile(`^  (\S+) answered (agent\d+\.\d+)\b`)

// Persist, then deliver: an answer the progress output shows as accepted
// is already stored. The real binary runs a five-agent team whose answers
// arrive together and is killed with SIGKILL the moment the first
// "answered" line appears on stderr, many times over; after each kill
// every answer any line showed is in coordination_events.jsonl and in the
// sessions database. (Before, the sessions writer and the log writer were
// subscribers like the display, and a kill within a millisecond of the
// line lost answers.) Nothing here depends on timing: whatever the
// machine's speed, a shown answer must be stored.
func TestAnAnswerShownAsAcceptedIsStoredWhenKilledAtOnce(t *testing.T) {
	bin := buildMassgen(t)
	_, url := simtest.Start(t, "defaults: {ttft_ms: 20, tokens_per_second: 0}\n")
	var team strings.Builder
	team.WriteString("agents:\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&team, "  - {id: a%d, backend: {type: chatcompletion, model: m-%d, base_url: %q}}\n", i, i, url)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// A bounded number of runs, within a bounded time: each one is a
	// complete check, the repetitions only make a lost answer likelier to
	// show.
	budget := time.Now().Add(60 * time.Second)
	shown := 0
	runs := 0
	for ; runs < 20 && (runs == 0 || time.Now().Before(budget)); runs++ {
		shown += killAfterFirstAnswer(t, ctx, bin, team.String())
		if t.Failed() {
			break
		}
	}
	t.Logf("%d runs killed after their first answer; %d answers shown, all stored", runs, shown)
}

// killAfterFirstAnswer runs one question in a fresh directory, kills the
// process as soon as stderr shows an answer accepted, and checks that
// every answer stderr showed is stored. It returns how many were shown.
func killAfterFirstAnswer(t *testing.T, ctx context.Context, bin, team string) int {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(team), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--config", "team.yaml", "What is 2+2?")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type answer struct{ agent, label string }
	var shown []answer
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		m := answeredLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if len(shown) == 0 {
			_ = cmd.Process.Kill() // SIGKILL: nothing runs after it
		}
		// Lines the process wrote before it died count as shown too.
		shown = append(shown, answer{m[1], m[2]})
	}
	_ = cmd.Wait()
	if len(shown) == 0 {
		t.Fatalf("no answer shown before the process ended:\n%s", strings.Join(lines, "\n"))
	}

	journals, _ := filepath.Glob(filepath.Join(dir, ".massgen", "massgen_logs", "log_*", "coordination_events.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("found %d coordination_events.jsonl, want 1", len(journals))
	}
	logged := map[answer]bool{}
	data, err := os.ReadFile(journals[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		var r event.Record
		if json.Unmarshal([]byte(l), &r) == nil && r.Type == event.TypeAnswerAccepted {
			logged[answer{r.Agent, r.Label}] = true
		}
	}

	st, err := store.Open(ctx, store.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[answer]bool{}
	if sess, err := st.Latest(ctx); err == nil {
		turns, err := st.Turns(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range turns {
			for _, a := range tn.Answers {
				stored[answer{a.Agent, a.Label}] = true
			}
		}
	}
	for _, a := range shown {
		if !logged[a] {
			t.Errorf("%s's answer %s was shown as accepted but is not in coordination_events.jsonl", a.agent, a.label)
		}
		if !stored[a] {
			t.Errorf("%s's answer %s was shown as accepted but is not in the sessions database", a.agent, a.label)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", strings.Join(lines, "\n"))
	}
	return len(shown)
}
