package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLogsListShowTableOpenAnalyze(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	if r := massgenIn(t, ctx, dir, "", "logs"); r.code != 0 || !strings.Contains(r.stdout, "no runs under") {
		t.Fatalf("logs with no runs: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"--config", "@examples/sim_single_agent", "First question"},
		{"--config", "@examples/sim_three_agents", "Second question"},
		{"--continue", "Follow-up"},
	} {
		if r := massgenIn(t, ctx, dir, "", args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	r := massgenIn(t, ctx, dir, "", "logs", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 {
		t.Fatalf("logs list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Newest first: the follow-up (a turn of the second run's session).
	for i, want := range []string{"Follow-up", "Second question", "First question"} {
		l := lines[i+1]
		if !strings.Contains(l, want) || !strings.Contains(l, "completed") || !strings.Contains(l, "$0.0000") {
			t.Errorf("line %d = %q, want %q completed with its cost", i+1, l, want)
		}
	}
	if !strings.HasPrefix(lines[1], "log_") || !strings.Contains(strings.Fields(lines[1])[0], "/turn_2") {
		t.Errorf("the follow-up is not listed as turn_2 of its session: %q", lines[1])
	}
	if !strings.Contains(lines[2], "researcher") || !strings.Contains(lines[3], "solo") {
		t.Errorf("winners missing:\n%s", r.stdout)
	}
	first := strings.Fields(lines[3])[0]

	r = massgenIn(t, ctx, dir, "", "logs", "show", first)
	for _, want := range []string{"question:  First question", "status:    completed", "winner:    solo", "final answer", "sim-solo (simulated)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("logs show lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := massgenIn(t, ctx, dir, "", "logs", "show"); !strings.Contains(r.stdout, "question:  Follow-up") {
		t.Errorf("logs show without RUN is not the latest:\n%s", r.stdout)
	}
	r = massgenIn(t, ctx, dir, "", "logs", "table", strings.Fields(lines[2])[0])
	if r.code != 0 || !strings.Contains(r.stdout, "researcher") {
		t.Errorf("logs table: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = massgenIn(t, ctx, dir, "", "logs", "open", first)
	if strings.TrimSpace(r.stdout) != filepath.Join(dir, ".massgen", "massgen_logs", first) {
		t.Errorf("logs open printed %q", r.stdout)
	}
	r = massgenIn(t, ctx, dir, "", "logs", "analyze", strings.Fields(lines[2])[0])
	for _, want := range []string{"completed", "per phase:", "coordination", "presentation", "per agent:", "researcher", "critic", "writer", "wasted work:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("logs analyze lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if r := massgenIn(t, ctx, dir, "", "logs", "show", "log_1999"); r.code != ExitConfig || !strings.Contains(r.stderr, "no run") {
		t.Errorf("unknown run: %d %s", r.code, r.stderr)
	}
}
