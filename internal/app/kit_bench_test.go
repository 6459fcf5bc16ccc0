package app

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/orchestrator"
)

// BenchmarkKitStartup measures what filesystem memory and skills add to a
// run: the kit's own start-up (skills discovery, each workspace's memory
// layout and policy, carrying 20 memories from a previous turn's log, the
// prompt sections: kit_startup_ms) and the wall time of a two-agent run on
// the simulator with workspaces, with memory (verification_and_final_only)
// and skills (10 project skills, the shipped ones), against the same run
// without them (kit/plain), alternating in one benchmark. The whole-run
// difference is larger than the start-up: a workspace with memory in it is
// not empty, so each answer snapshots it (an empty one is not copied).
//
//	go test -run '^$' -bench KitStartup -benchtime 20x ./internal/app/
func BenchmarkKitStartup(b *testing.B) {
	dir := b.TempDir()
	write := func(p, body string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	team := "agents:\n  - {id: a, backend: {type: sim, model: sim-a, cwd: ws_a}}\n  - {id: b, backend: {type: sim, model: sim-b, cwd: ws_b}}\n"
	plain := filepath.Join(dir, "plain.yaml")
	write(plain, team)
	kit := filepath.Join(dir, "kit.yaml")
	write(kit, team+"orchestrator:\n  coordination:\n    enable_memory_filesystem_mode: true\n"+
		"    learning_capture_mode: verification_and_final_only\n    use_skills: true\n")
	for i := range 10 {
		write(filepath.Join(dir, ".agent", "skills", fmt.Sprintf("s%d", i), "SKILL.md"),
			fmt.Sprintf("---\nname: s%d\ndescription: skill number %d\n---\nbody\n", i, i))
	}
	prev := filepath.Join(dir, "prev")
	for i := range 20 {
		tier := "short_term"
		if i%2 == 1 {
			tier = "long_term"
		}
		write(filepath.Join(prev, "final", "a", "workspace", "memory", tier, fmt.Sprintf("m%d.md", i)),
			fmt.Sprintf("---\ndescription: memory %d\n---\na line of memory %d\n", i, i))
	}
	cfg, err := config.Load(kit, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	var base, with, startup time.Duration
	for i := range b.N {
		// The kit's own start-up, as a run does it: discovery, the
		// layout and policy of each workspace, the carry and the sections.
		run := filepath.Join(dir, "startup", fmt.Sprint(i))
		start := time.Now()
		k, _, err := newRunKit(cfg, dir)
		if err != nil {
			b.Fatal(err)
		}
		rw := &runWorkspaces{kit: k, dirs: map[string]string{}, snaps: &snapshots{temp: filepath.Join(run, "views")}}
		var agents []orchestrator.Agent
		for _, id := range []string{"a", "b"} {
			ws := filepath.Join(run, id)
			if err := os.MkdirAll(ws, 0o755); err != nil {
				b.Fatal(err)
			}
			if _, err := k.policy(ws); err != nil {
				b.Fatal(err)
			}
			rw.dirs[id] = ws
			agents = append(agents, orchestrator.Agent{ID: id})
		}
		if _, err := rw.withKit(agents, prev); err != nil {
			b.Fatal(err)
		}
		startup += time.Since(start)
		for _, c := range []struct {
			cfg, prev string
			sum       *time.Duration
		}{{plain, "", &base}, {kit, prev, &with}} {
			env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
			start := time.Now()
			out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{Config: c.cfg}, Logging: Logging{NoLogs: true}, Resume: Resume{PreviousTurn: c.prev}})
			if err != nil || out.Status != "completed" {
				b.Fatalf("run failed: %v %+v", err, out)
			}
			*c.sum += time.Since(start)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(base.Microseconds())/n/1000, "plain_ms/run")
	b.ReportMetric(float64((with-base).Microseconds())/n/1000, "kit_added_ms/run")
	b.ReportMetric(float64(with)/float64(base), "kit/plain")
	b.ReportMetric(float64(startup.Microseconds())/n/1000, "kit_startup_ms/run")
	b.ReportMetric(float64(startup)/float64(base), "kit_startup/plain_run")
}
