package clitest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/coord"
)

// Run plays a task to its end, accepting every proposal (a vote for its
// own label, targeting "other"), and returns what it reported.
func Run(t testing.TB, ctx context.Context, a *cli.Agent, task agent.Task) (outs []agent.Outcome, done agent.Done) {
	t.Helper()
	inbox := agent.NewInbox()
	for o := range a.Run(ctx, task, inbox) {
		outs = append(outs, o)
		switch o := o.(type) {
		case agent.Propose:
			v := coord.Verdict{Outcome: coord.Accepted, Label: "agent1"}
			if o.Action.Kind == coord.ActVote {
				v.Label, v.Target = o.Action.Label, "other"
			}
			inbox.Post(agent.Verdict{Verdict: v})
		case agent.Done:
			done = o
		}
	}
	return outs, done
}

// Timeout is the test's context, ended after d at the latest.
func Timeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// Proposals are the actions a task proposed, in order.
func Proposals(outs []agent.Outcome) []coord.Action {
	var acts []coord.Action
	for _, o := range outs {
		if p, ok := o.(agent.Propose); ok {
			acts = append(acts, p.Action)
		}
	}
	return acts
}

// Cancel cancels a task's Run (cancel is its context's) and waits, up to
// 30 s, for the Done it sends on ended, which must say cancelled; it
// returns that Done.
func Cancel(t testing.TB, cancel context.CancelFunc, ended <-chan agent.Done) agent.Done {
	t.Helper()
	cancel()
	var done agent.Done
	select {
	case done = <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end after its context was cancelled")
	}
	if done.Failure == nil || done.Failure.Kind != coord.FailCancelled {
		t.Errorf("failure %+v, want cancelled", done.Failure)
	}
	return done
}

// Processes lists this machine's processes (a container's among them)
// whose command line holds s, each as "pid: command line". The test
// skips without /proc.
func Processes(t testing.TB, s string) []string {
	t.Helper()
	return processes(t, false, func(b []byte) bool { return bytes.Contains(b, []byte(s)) })
}

// AgentProcesses lists the processes whose command line or environment
// names a's workspace or home (both unique to a test), or whose command
// line is one of cmdlines (its arguments joined by spaces: a process in a
// container need not show the agent's environment), each as "pid:
// command line". The test skips without /proc.
func AgentProcesses(t testing.TB, a *cli.Agent, cmdlines ...string) []string {
	t.Helper()
	return processes(t, true, func(b []byte) bool {
		if bytes.Contains(b, []byte(a.Home)) || bytes.Contains(b, []byte(a.Workdir)) {
			return true
		}
		for _, c := range cmdlines {
			if string(b) == strings.ReplaceAll(c, " ", "\x00")+"\x00" {
				return true
			}
		}
		return false
	})
}

// processes lists the processes whose command line (or, with environ,
// environment) match says yes to, as /proc has it: NUL-ended strings.
func processes(t testing.TB, environ bool, match func([]byte) bool) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	files := []string{"cmdline"}
	if environ {
		files = append(files, "environ")
	}
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && match(b) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
				break
			}
		}
	}
	return found
}
