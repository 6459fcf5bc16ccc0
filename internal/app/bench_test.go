package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDeadEndpoint measures what an unreachable provider costs a run:
// the wall time of a two-agent run in which one agent's endpoint refuses
// connections, minus the same run without that agent (measured in the same
// benchmark). Retries back off, the shared circuit breaker opens after three
// failures and the agent's remaining turns fail at once. Target: under 2 s.
//
//	go test -run '^$' -bench DeadEndpoint -benchtime 3x ./internal/app/
func BenchmarkDeadEndpoint(b *testing.B) {
	dir := b.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	alone := write("alone.yaml", "agents:\n  - {id: good, backend: {type: sim, model: sim-good}}\n")
	withDead := write("dead.yaml", "agents:\n  - {id: good, backend: {type: sim, model: sim-good}}\n"+
		"  - {id: dead, backend: {type: chatcompletion, model: m, base_url: \"http://127.0.0.1:1/v1\"}}\n")
	var base, dead time.Duration
	for range b.N {
		for _, c := range []struct {
			cfg string
			sum *time.Duration
		}{{alone, &base}, {withDead, &dead}} {
			env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
			start := time.Now()
			out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{Config: c.cfg}, Logging: Logging{NoLogs: true}})
			if err != nil || out.Status != "completed" {
				b.Fatalf("run failed: %v %+v", err, out)
			}
			*c.sum += time.Since(start)
		}
	}
	b.ReportMetric(float64(base.Milliseconds())/float64(b.N), "healthy_ms/run")
	b.ReportMetric(float64((dead-base).Milliseconds())/float64(b.N), "dead_endpoint_cost_ms/run")
}
