package app

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkMCPStartup measures what MCP servers add to a run's wall time:
// the same one-agent simulated run (the agent answers, then the run ends)
// with no MCP server, one, and three (distinct servers, so three
// processes). The servers start in parallel in the background as the team
// is built; the agent's first request waits for them, since it must carry
// their tool definitions. Ratios are against the no-server run measured in
// the same benchmark; three servers should cost about what one does.
//
//	go test -run '^$' -bench MCPStartup -benchtime 5x ./internal/app/
func BenchmarkMCPStartup(b *testing.B) {
	server := mcpEverything(b)
	dir := b.TempDir()
	config := func(n int) []byte {
		var s strings.Builder
		s.WriteString("agent:\n  backend:\n    type: sim\n    ttft_ms: 200\n")
		if n > 0 {
			s.WriteString("    mcp_servers:\n")
			for i := range n {
				fmt.Fprintf(&s, "      e%d: {command: %q, args: [stdio]}\n", i, server)
			}
		}
		return []byte(s.String())
	}
	counts := []int{0, 1, 3}
	sums := make([]time.Duration, len(counts))
	for range b.N {
		for i, n := range counts {
			env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
			start := time.Now()
			out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: config(n)}, Logging: Logging{NoLogs: true}})
			if err != nil || out.Status != "completed" {
				b.Fatalf("run with %d servers failed: %v %+v", n, err, out)
			}
			sums[i] += time.Since(start)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(sums[0]), "no_server_ms/run")
	b.ReportMetric(ms(sums[1]), "one_server_ms/run")
	b.ReportMetric(ms(sums[2]), "three_servers_ms/run")
	b.ReportMetric(float64(sums[1])/float64(sums[0]), "one/none")
	b.ReportMetric(float64(sums[2])/float64(sums[0]), "three/none")
	b.ReportMetric(float64(sums[2])/float64(sums[1]), "three/one")
}
