package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The start-up benchmark: how long massgen takes to start and do a short
// command, against /bin/true measured in the same run (DESIGN.md §3a,
// "Weight": start-up ≤ 10 ms). It reports and never fails: a loaded
// machine makes both slower, and the ratio says how much massgen adds.
//
//	go test -run '^$' -bench StartUp ./cmd/massgen/
//
// Each iteration runs /bin/true and then massgen, so that both see the
// same load; the metrics are each one's mean wall time and massgen's
// excess over true.

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// binary builds the massgen command once per test binary.
func binary(b *testing.B) string {
	b.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "massgen-startup-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "massgen")
		out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
		if err != nil {
			built.err = &buildError{err, out}
		}
	})
	if built.err != nil {
		b.Fatal(built.err)
	}
	return built.bin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func BenchmarkStartUp(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1) to compare with")
	}
	example, err := filepath.Abs("../../examples/sim_three_agents.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		// Reads and validates a config: no TUI, no provider, no network.
		{"config-validate", []string{"config", "validate", example}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bin := binary(b)
			run := func(path string, args ...string) time.Duration {
				cmd := exec.Command(path, args...)
				cmd.Env = append(os.Environ(), "NO_COLOR=1")
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s %s: %v\n%s", path, strings.Join(args, " "), err, out)
				}
				return time.Since(start)
			}
			run(bin, bc.args...) // the page cache, not the first iteration, pays for reading the binary
			var base, mg time.Duration
			b.ResetTimer()
			for range b.N {
				base += run(truePath)
				mg += run(bin, bc.args...)
			}
			n := float64(b.N)
			b.ReportMetric(0, "ns/op") // both programs are in the loop: ns/op would mean neither
			b.ReportMetric(mg.Seconds()*1e3/n, "massgen-ms/op")
			b.ReportMetric(base.Seconds()*1e3/n, "true-ms/op")
			b.ReportMetric((mg-base).Seconds()*1e3/n, "excess-ms/op")
			b.ReportMetric(mg.Seconds()/max(base.Seconds(), 1e-9), "x-true")
		})
	}
}
