package app

import (
	"fmt"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim"
)

// BenchmarkCLIAgentCost measures what a coding-agent CLI adds to an agent's
// run against an API agent on the same simulated model, in one run: each
// iteration runs a one-agent team (an answer turn and a vote turn) of each
// kind. It reports, per kind, the seconds of a run (run-s), the
// milliseconds from the run's start to its model's first request
// (start-ms: the CLI's start-up), and both as ratios to the API agent's
// (run-x, start-x).
//
//	go test -run '^$' -bench CLIAgentCost -benchtime 3x ./internal/app/
func BenchmarkCLIAgentCost(b *testing.B) {
	kinds := []string{"chatcompletion", "claude_code", "codex", "gemini_cli"}
	b.Setenv("PATH", clitest.PATH(b, "claude_code", "codex", "gemini_cli"))
	srv := llmsim.New(nil)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}
	for _, k := range kinds[1:] {
		vars["MASSGEN_"+strings.ToUpper(k)+"_BASE_URL"] = url
	}
	runS, startMS := map[string]time.Duration{}, map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, kind := range kinds {
			work := b.TempDir()
			model := fmt.Sprintf("bench-%s-%d", kind, i) // its own script cursor, its own records
			extra := ""
			if kind == "chatcompletion" {
				extra = fmt.Sprintf(", base_url: %q", url)
			}
			cfg := filepath.Join(work, "team.yaml")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf("agents:\n  - id: a\n    backend: {type: %s, model: %s%s}\n", kind, model, extra)), 0o644); err != nil {
				b.Fatal(err)
			}
			env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: work}
			start := time.Now()
			out, err := Execute(b.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: cfg}, Overrides: Overrides{Timeout: 300}, Logging: Logging{NoLogs: true}})
			if err != nil || out.Status != "completed" {
				b.Fatalf("%s: %v %+v", kind, err, out)
			}
			runS[kind] += time.Since(start)
			for _, r := range srv.Requests() {
				if r.Model == model {
					startMS[kind] += r.Start.Sub(start)
					break
				}
			}
		}
	}
	b.StopTimer()
	n := time.Duration(b.N)
	base, baseStart := runS[kinds[0]]/n, startMS[kinds[0]]/n
	for _, kind := range kinds {
		b.ReportMetric((runS[kind] / n).Seconds(), kind+"-run-s")
		b.ReportMetric(float64((startMS[kind] / n).Milliseconds()), kind+"-start-ms")
		if kind != kinds[0] {
			b.ReportMetric(float64(runS[kind]/n)/float64(base), kind+"-run-x")
			b.ReportMetric(float64(startMS[kind]/n)/float64(max(baseStart, time.Millisecond)), kind+"-start-x")
		}
	}
}
