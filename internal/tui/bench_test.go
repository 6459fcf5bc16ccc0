package tui

import (
	"fmt"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/massgen/massgen/internal/event"
)

// streamFor publishes, for d of wall time, one text delta per agent every
// 5 ms: each agent streams 200 tokens a second, as a fast model does.
func streamFor(b *event.Broker, agents []event.AgentInfo, d time.Duration) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	end := time.Now().Add(d)
	for now := range tick.C {
		if now.After(end) {
			return
		}
		for _, a := range agents {
			b.Publish(event.TextDelta{Agent: a.ID, Text: "token "})
		}
	}
}

// cpu is the process's user and system CPU time so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runFor streams a run of 16 agents for d to observe, and returns the CPU
// the whole process spent (publishing included: the same in both modes).
func runFor(d time.Duration, observe func(*event.Broker) func()) time.Duration {
	agents := team(16)
	b := event.NewBroker()
	wait := observe(b)
	b.Publish(event.RunStarted{Question: "q", Team: agents})
	for _, a := range agents {
		b.Publish(event.TurnStarted{Agent: a.ID})
	}
	start := cpu()
	streamFor(b, agents, d)
	b.Publish(event.RunFinished{Status: "completed"})
	b.Close()
	wait()
	return cpu() - start
}

// BenchmarkStreaming16Agents is the TUI's cost with 16 agents streaming 200
// tokens a second each, at 160×48, against the plain display's (progress
// lines: deltas skipped, each step described) in the same run: CPU per
// second of run, and their ratio. Run it with -benchtime=1x; each mode
// streams for two seconds of wall time.
//
//	go test ./internal/tui -run '^$' -bench Streaming16 -benchtime=1x
func BenchmarkStreaming16Agents(b *testing.B) {
	const d = 2 * time.Second
	for range b.N {
		plain := runFor(d, func(br *event.Broker) func() {
			sub := br.Subscribe(append(slices.Clone(event.Deltas), event.Bookkeeping...)...)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					e, ok := sub.Next(nil)
					if !ok {
						return
					}
					fmt.Fprintln(io.Discard, sub.View().Describe(e))
				}
			}()
			return func() { <-done }
		})
		var dropped uint64
		tuiCPU := runFor(d, func(br *event.Broker) func() {
			u := New(Options{Output: io.Discard, Width: 160, Height: 48, ExitAtEnd: true,
				ProgramOptions: []tea.ProgramOption{tea.WithInput(nil)}})
			sub := br.Subscribe(event.Bookkeeping...)
			done := make(chan struct{})
			go func() { u.Follow(sub, Run{}); close(done) }()
			return func() {
				<-done
				if _, err := u.Wait(); err != nil {
					b.Fatal(err)
				}
				dropped = sub.Dropped()
			}
		})
		perSec := func(c time.Duration) float64 { return float64(c.Milliseconds()) / d.Seconds() }
		b.ReportMetric(perSec(plain), "plain-cpu-ms/s")
		b.ReportMetric(perSec(tuiCPU), "tui-cpu-ms/s")
		b.ReportMetric(float64(tuiCPU)/float64(max(plain, time.Millisecond)), "tui/plain")
		b.ReportMetric(float64(dropped), "tui-dropped-deltas")
	}
}
