package app

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// A session turn's store that fails while the run goes on (its durable
// sink, called inside the broker's Publish, and the log-directory note
// made before the run) is a warning of that run, in its events: once for
// the sink however often it fails, and nothing printed on stderr when the
// run is observed. The events it failed to store are shown all the same.
func TestAStoreThatFailsDuringARunIsAWarningOfIt(t *testing.T) {
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: t.TempDir()}
	var (
		mu       sync.Mutex
		warnings []string
		answers  int
		failed   int
	)
	rq := Request{
		Question: "What is 2+2?",
		Team:     Team{Config: "@examples/sim_three_agents"},
		Resume: Resume{Turn: &TurnLog{
			Persist: func(e event.Event) error {
				if _, ok := e.(event.AnswerAccepted); ok {
					mu.Lock()
					defer mu.Unlock()
					failed++
					return errors.New("sessions database: disk I/O error")
				}
				return nil
			},
			Opened: func(string) error { return errors.New("sessions database: cannot record the log directory") },
		}},
		Observer: Observer{Observe: func(sub *event.Subscription, _ RunInfo) {
			for {
				e, ok := sub.Next(nil)
				if !ok {
					return
				}
				mu.Lock()
				switch e := e.(type) {
				case event.Warning:
					warnings = append(warnings, e.Text)
				case event.AnswerAccepted:
					answers++
				}
				mu.Unlock()
			}
		}},
	}
	out, err := Execute(t.Context(), env, rq)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if failed < 2 || answers != failed {
		t.Fatalf("%d answers failed to store, %d shown; want at least 2, all shown", failed, answers)
	}
	count := func(s string) int {
		return len(slices.DeleteFunc(slices.Clone(warnings), func(w string) bool { return !strings.Contains(w, s) }))
	}
	if n := count("disk I/O error"); n != 1 {
		t.Errorf("the failing sink is %d warnings of the run, want 1: %q", n, warnings)
	}
	if n := count("cannot record the log directory"); n != 1 {
		t.Errorf("the failed note of the log directory is %d warnings of the run, want 1: %q", n, warnings)
	}
	if stderr.Len() > 0 {
		t.Errorf("an observed run printed on stderr:\n%s", stderr.String())
	}
}

// A warning of the team's MCP pool that arises when no run is in
// progress (massgen serve's cached team, its servers retried between
// requests) is said by the next run, once, and printed nowhere else.
func TestAnMCPWarningBetweenRunsGoesToTheNextRun(t *testing.T) {
	tm := &team{}
	tm.mcp = mcp.NewPool(mcp.Options{Warn: tm.mcpWarn, LeftOut: tm.mcpLeftOut})
	defer tm.mcp.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func() []string {
		w := &warnings{}
		_, done := tm.withMCPRun(t.Context(), log, "", time.Time{}, &runIgnored{warnings: w})
		done("")
		all, _ := w.lines()
		return all
	}
	tm.mcpWarn("MCP server x was left out")
	if got := run(); !slices.Equal(got, []string{"warning: MCP server x was left out"}) {
		t.Errorf("the next run's warnings: %q", got)
	}
	if got := run(); len(got) != 0 {
		t.Errorf("the run after that warns again: %q", got)
	}
}

// A config that is read but whose team cannot be built (here: no API
// key) has no run and no events: its warnings are printed on stderr with
// the error, each distinct one once.
func TestAConfigWhoseTeamCannotBeBuiltStillWarns(t *testing.T) {
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: t.TempDir()}
	cfg := "agents:\n- {id: a, backend: {type: openai, model: gpt-4o}}\n- {id: b, backend: {type: openai, model: gpt-4o}}\nunknown_key: 1\nother_unknown: 2\n"
	_, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(cfg)}, Logging: Logging{NoLogs: true}})
	if err == nil {
		t.Fatal("a team with no API key was built")
	}
	for _, key := range []string{"unknown_key", "other_unknown"} {
		if n := strings.Count(stderr.String(), "warning: "+key); n != 1 {
			t.Errorf("the warning for %s is printed %d times, want once (error %v):\n%s", key, n, err, stderr.String())
		}
	}
}
