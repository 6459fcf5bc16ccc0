package sandbox_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// BenchmarkSandboxOverhead runs `true` under bubblewrap and directly
// (unsandboxed Runner, same timeout and capture path) in the same
// benchmark and reports the ratio: what the sandbox costs a command.
//
//	go test -run '^$' -bench SandboxOverhead -benchtime 50x ./internal/workspace/sandbox/
func BenchmarkSandboxOverhead(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap is not installed")
	}
	w := newWorld(b)
	boxed, err := sandbox.New(w.g, sandbox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	direct, err := sandbox.New(w.g, sandbox.Config{Unsandboxed: true, Bwrap: "/nonexistent/bwrap"})
	if err != nil {
		b.Fatal(err)
	}
	var tBoxed, tDirect time.Duration
	for range b.N {
		for _, c := range []struct {
			r   *sandbox.Runner
			sum *time.Duration
		}{{direct, &tDirect}, {boxed, &tBoxed}} {
			start := time.Now()
			res, err := c.r.Run(context.Background(), "true", "")
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %+v", err, res)
			}
			*c.sum += time.Since(start)
		}
	}
	b.ReportMetric(float64(tDirect.Microseconds())/float64(b.N), "direct_us/cmd")
	b.ReportMetric(float64(tBoxed.Microseconds())/float64(b.N), "bwrap_us/cmd")
	b.ReportMetric(float64(tBoxed)/float64(tDirect), "ratio")
}

// BenchmarkDockerOverhead runs `true` in docker mode's container (made
// before the timing, as it is once per agent) and directly, in the same
// benchmark, and reports the ratio; the container's creation is reported
// on its own.
//
//	go test -run '^$' -bench DockerOverhead -benchtime 50x ./internal/workspace/sandbox/
func BenchmarkDockerOverhead(b *testing.B) {
	image := dockertest.Image(b)
	w := newWorld(b)
	direct, err := sandbox.New(w.g, sandbox.Config{Unsandboxed: true, Bwrap: "/nonexistent/bwrap"})
	if err != nil {
		b.Fatal(err)
	}
	docker, err := sandbox.New(w.g, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: image}})
	if err != nil || docker.Disabled() != nil {
		b.Fatal(err, docker.Disabled())
	}
	defer docker.Close()
	start := time.Now()
	if _, err := docker.Run(context.Background(), "true", ""); err != nil {
		b.Fatal(err)
	}
	made := time.Since(start)
	var tDocker, tDirect time.Duration
	b.ResetTimer()
	for range b.N {
		for _, c := range []struct {
			r   *sandbox.Runner
			sum *time.Duration
		}{{direct, &tDirect}, {docker, &tDocker}} {
			start := time.Now()
			res, err := c.r.Run(context.Background(), "true", "")
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %+v", err, res)
			}
			*c.sum += time.Since(start)
		}
	}
	b.ReportMetric(float64(tDirect.Microseconds())/float64(b.N), "direct_us/cmd")
	b.ReportMetric(float64(tDocker.Microseconds())/float64(b.N), "docker_us/cmd")
	b.ReportMetric(float64(tDocker)/float64(tDirect), "ratio")
	b.ReportMetric(float64(made.Milliseconds()), "first_cmd_with_container_ms")
}
