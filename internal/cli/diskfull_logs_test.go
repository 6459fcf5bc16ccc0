package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/diskfull"
	"github.com/massgen/massgen/internal/runlog"
)

// A run whose log disk fills up completes all the same: its answer is
// printed, the user is told on stderr that the logs are incomplete, and
// what is on disk is usable — status.json says the run completed (massgen
// logs does not call it dead) and that its logs are incomplete, vote.json
// and the final answer are there, every JSONL log is whole lines.
func TestARunWhoseLogDiskFillsCompletesAndSaysItsLogsAreIncomplete(t *testing.T) {
	root := diskfull.Mount(t, 1<<20)
	if root == "" {
		return // run in a user namespace, where the tmpfs could be mounted
	}
	bin := buildMassgen(t)
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = work
		cmd.Env = []string{"HOME=" + work, "PATH=" + os.Getenv("PATH")}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	// Room for the start of the log (and its reserve), not for the run.
	diskfull.Fill(t, root, 96<<10)
	stdout, stderr, err := run("--config", "@examples/sim_three_agents", "--log-dir", root, "What is the capital of France?")
	if err != nil {
		t.Fatalf("the run failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "capital of France") { // the answer takes up the question
		t.Errorf("no answer on stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "are incomplete (the disk was full") {
		t.Errorf("stderr does not say the logs are incomplete:\n%s", stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "log_*"))
	if len(dirs) != 1 {
		t.Fatalf("log directories: %v", dirs)
	}
	dir := dirs[0]
	var st runlog.StatusView
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || json.Unmarshal(data, &st) != nil {
		t.Fatalf("status.json: %v\n%s", err, data)
	}
	if st.Meta.Status != "completed" || st.Meta.LogsIncomplete == "" {
		t.Errorf("status.json: status %q, logs_incomplete %q; want completed and a note", st.Meta.Status, st.Meta.LogsIncomplete)
	}
	for _, f := range []string{"vote.json", filepath.Join("final", st.Results.Winner, "answer.txt")} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (want it written whole)", f, err)
		}
	}
	for _, name := range []string{"coordination_events.jsonl", runlog.ReplayName} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue // not even created: nothing torn
		}
		if err := runlog.ReadJSONLines(f, func([]byte) error { return nil }); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}

	// massgen logs reads the run as completed, with its logs incomplete.
	list, _, err := run("logs", "list", "--log-dir", root)
	if err != nil || !strings.Contains(list, "completed") || strings.Contains(list, "died") {
		t.Errorf("massgen logs list (%v):\n%s", err, list)
	}
	show, _, err := run("logs", "show", "--log-dir", root)
	if err != nil || !strings.Contains(show, "logs:      incomplete:") {
		t.Errorf("massgen logs show (%v) does not say the logs are incomplete:\n%s", err, show)
	}
}

// A log disk with no room even for the run's directory does not stop the
// run: it goes on without logs, says so on stderr, and prints its answer.
func TestARunWithNoRoomForItsLogsRunsWithoutThem(t *testing.T) {
	root := diskfull.MountWith(t, "size=1m,nr_inodes=1") // no file or directory can be created
	if root == "" {
		return // run in a user namespace, where the tmpfs could be mounted
	}
	bin := buildMassgen(t)
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", "@examples/sim_three_agents", "--log-dir", filepath.Join(root, "logs"), "What is the capital of France?")
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "PATH=" + os.Getenv("PATH")}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the run failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "capital of France") { // the answer takes up the question
		t.Errorf("no answer on stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "no logs were written: there is no space for them") {
		t.Errorf("stderr does not say the run has no logs:\n%s", stderr.String())
	}
}
