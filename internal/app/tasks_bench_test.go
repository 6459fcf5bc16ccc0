package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
)

// BenchmarkTaskPlanningStartup measures what task planning adds to a run:
// its own start-up (each agent's planner, its nine tools and the prompt
// section: planning_startup_ms), the prompt it adds (input tokens of the
// whole run, as the simulator counts them: planning_added_in_tokens/run)
// and the wall time of a two-agent run on the simulator with workspaces,
// with task planning in filesystem mode, against the same run without it
// (planning/plain), alternating in one benchmark. The agents do not call
// the tools here: it is the price of having them.
//
//	go test -run '^$' -bench TaskPlanningStartup -benchtime 20x ./internal/app/
func BenchmarkTaskPlanningStartup(b *testing.B) {
	dir := b.TempDir()
	team := "agents:\n  - {id: a, backend: {type: sim, model: sim-a, cwd: ws_a}}\n  - {id: b, backend: {type: sim, model: sim-b, cwd: ws_b}}\n"
	plain := filepath.Join(dir, "plain.yaml")
	planning := filepath.Join(dir, "planning.yaml")
	if err := os.WriteFile(plain, []byte(team), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(planning, []byte(team+"orchestrator:\n  coordination:\n    enable_agent_task_planning: true\n"+
		"    task_planning_filesystem_mode: true\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(planning, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	var base, with, startup time.Duration
	var baseIn, withIn int64
	for range b.N {
		start := time.Now()
		rw := &runWorkspaces{}
		if _, err := rw.withTaskPlanning(cfg, []orchestrator.Agent{{ID: "a"}, {ID: "b"}}, nil); err != nil {
			b.Fatal(err)
		}
		startup += time.Since(start)
		for _, c := range []struct {
			cfg string
			sum *time.Duration
			in  *int64
		}{{plain, &base, &baseIn}, {planning, &with, &withIn}} {
			env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
			start := time.Now()
			out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{Config: c.cfg}, Logging: Logging{NoLogs: true}})
			if err != nil || out.Status != "completed" {
				b.Fatalf("run failed: %v %+v", err, out)
			}
			*c.sum += time.Since(start)
			for _, u := range out.Usage {
				*c.in += u.InputTokens
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(base.Microseconds())/n/1000, "plain_ms/run")
	b.ReportMetric(float64((with-base).Microseconds())/n/1000, "planning_added_ms/run")
	b.ReportMetric(float64(with)/float64(base), "planning/plain")
	b.ReportMetric(float64(startup.Microseconds())/n/1000, "planning_startup_ms/run")
	b.ReportMetric(float64(withIn-baseIn)/n, "planning_added_in_tokens/run")
	b.ReportMetric(float64(withIn)/float64(max(baseIn, 1)), "planning/plain_in_tokens")
}
