package orchestrator

import (
	"context"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
)

// BenchmarkCoordination runs whole orchestrations against the simulator at
// a fixed time to first token and token rate, and reports:
//
//   - overhead_%: wall time minus the critical path of dependent model calls,
//     as a share of that critical path (the baseline, measured in the same
//     run from the simulator's own request log);
//
//   - overhead_ms/step: the same overhead per link of the critical chain
//     (one coordination step: a model call ends → the next dependent one starts);
//
//   - cancel_p50_ms / cancel_max_ms: time from an accepted new answer to the
//     simulator seeing the other agents' superseded requests cancelled;
//
//   - wasted_out_tok/run, wasted_in_tok/run: tokens streamed to, and prompt
//     tokens sent by, requests that were cancelled.
//
// Each team size runs twice: with the default hold (an agent that has
// answered waits while others' first answers are pending) and eager (it
// starts at once and the next answer cancels it), so the cancellation path
// is measured too.
//
//	go test -run '^$' -bench Coordination -benchtime 3x ./internal/orchestrator/
func BenchmarkCoordination(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the massgen binary runs
	for _, n := range []int{3, 16} {
		for _, mode := range []string{"hold", "eager"} {
			b.Run(fmt.Sprintf("agents=%d/%s", n, mode), func(b *testing.B) {
				benchCoordination(b, n, mode == "eager")
			})
		}
	}
}

func benchCoordination(b *testing.B, n int, eager bool) {
	// One unmeasured run first: it pays the process's one-time costs (SDK
	// reflection caches, first connections) that are not coordination.
	benchRun(b, n, eager)
	var sum benchFigures
	for range b.N {
		sum.add(benchRun(b, n, eager))
	}
	k := float64(b.N)
	b.ReportMetric(100*sum.overhead.Seconds()/sum.critical.Seconds(), "overhead_%")
	b.ReportMetric(float64(sum.overhead.Microseconds())/1000/float64(sum.steps), "overhead_ms/step")
	b.ReportMetric(float64(sum.critical.Milliseconds())/k, "critical_ms/run")
	b.ReportMetric(100*sum.clientOverhead.Seconds()/sum.clientCritical.Seconds(), "loop_overhead_%")
	b.ReportMetric(float64(sum.clientOverhead.Microseconds())/1000/float64(sum.steps), "loop_overhead_ms/step")
	if len(sum.cancelLags) > 0 {
		slices.Sort(sum.cancelLags)
		b.ReportMetric(float64(sum.cancelLags[len(sum.cancelLags)/2].Microseconds())/1000, "cancel_p50_ms")
		b.ReportMetric(float64(sum.cancelLags[len(sum.cancelLags)-1].Microseconds())/1000, "cancel_max_ms")
	}
	b.ReportMetric(float64(sum.wastedOut)/k, "wasted_out_tok/run")
	b.ReportMetric(float64(sum.wastedIn)/k, "wasted_in_tok/run")
	b.ReportMetric(float64(sum.cancelled)/k, "cancelled_req/run")
}

type benchFigures struct {
	overhead, critical time.Duration
	// The same measured from the orchestrator's side of each model call:
	// what remains is the loop's own time between dependent calls.
	clientOverhead, clientCritical time.Duration
	steps                          int
	cancelLags                     []time.Duration
	wastedOut, wastedIn            int
	cancelled                      int
}

func (s *benchFigures) add(f benchFigures) {
	s.overhead += f.overhead
	s.critical += f.critical
	s.clientOverhead += f.clientOverhead
	s.clientCritical += f.clientCritical
	s.steps += f.steps
	s.cancelLags = append(s.cancelLags, f.cancelLags...)
	s.wastedOut += f.wastedOut
	s.wastedIn += f.wastedIn
	s.cancelled += f.cancelled
}

const benchScenario = `
defaults:
  ttft_ms: 100
  tokens_per_second: 400
models: {}
`

func benchRun(b *testing.B, n int, eager bool) benchFigures {
	b.StopTimer()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("a%02d", i+1)
	}
	sc, err := llmsim.ParseScenario([]byte(benchScenario))
	if err != nil {
		b.Fatal(err)
	}
	srv := llmsim.New(sc)
	srv.DropMessages()
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	agents := simAgents(url, ids)
	var mu sync.Mutex
	var calls []span
	for i := range agents {
		agents[i].Model = timed{agents[i].Model, &mu, &calls}
	}
	broker := event.NewBroker()
	rec := record(broker)
	b.StartTimer()
	res := Run(context.Background(), "Benchmark question: what is the capital of France?", Options{Agents: agents, Events: broker, Settings: benchSettings(eager)})
	b.StopTimer()
	broker.Close()
	<-rec.done
	if res.Status != Completed {
		b.Fatalf("run did not complete: %s %v", res.Status, res.Err)
	}
	// Let the simulator notice the last cancellations before reading its log.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = srv.WaitFor(ctx, func(rs []llmsim.Record) bool {
		for _, r := range rs {
			if r.End.IsZero() {
				return false
			}
		}
		return true
	})
	cancel()
	return figures(rec.events, srv.Requests(), calls)
}

// span is one model call: as the simulator saw it (server side), or as the
// orchestrator saw it, from calling Stream to the end of the stream.
type span struct {
	start, end time.Time
	ok         bool // completed (not cancelled or failed)
}

// criticalChain walks back from the call that ended last: each link's
// predecessor is the completed call that ended last before it started. The
// gaps between links are time when no model call on the path was running.
func criticalChain(spans []span) (total time.Duration, links int) {
	if len(spans) == 0 {
		return 0, 0
	}
	byEnd := slices.Clone(spans)
	slices.SortFunc(byEnd, func(a, b span) int { return a.end.Compare(b.end) })
	cur := byEnd[len(byEnd)-1]
	for {
		total += cur.end.Sub(cur.start)
		links++
		var prev *span
		for i := range byEnd {
			if r := &byEnd[i]; !r.end.After(cur.start) && r.ok {
				prev = r
			}
		}
		if prev == nil {
			return total, links
		}
		cur = *prev
	}
}

// timed records every call of a model as the orchestrator makes it.
type timed struct {
	m     llm.Model
	mu    *sync.Mutex
	calls *[]span
}

func (t timed) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		sp := span{start: time.Now(), ok: true}
		defer func() {
			sp.end = time.Now()
			t.mu.Lock()
			*t.calls = append(*t.calls, sp)
			t.mu.Unlock()
		}()
		for c, err := range t.m.Stream(ctx, req) {
			if err != nil {
				sp.ok = false
			}
			if !yield(c, err) {
				sp.ok = false
				return
			}
		}
		if ctx.Err() != nil {
			sp.ok = false
		}
	}
}

// figures derives the benchmark's numbers from a run's events and the
// simulator's request log.
func figures(events []event.Record, reqs []llmsim.Record, calls []span) benchFigures {
	var f benchFigures
	var start, end time.Time
	for _, e := range events {
		switch e.Type {
		case event.TypeRunStarted:
			start = e.Time
		case event.TypeRunFinished:
			end = e.Time
		}
	}
	spans := make([]span, len(reqs))
	for i, r := range reqs {
		spans[i] = span{r.Start, r.End, r.Outcome == "completed"}
	}
	f.critical, f.steps = criticalChain(spans)
	f.clientCritical, _ = criticalChain(calls)
	f.overhead = end.Sub(start) - f.critical
	f.clientOverhead = end.Sub(start) - f.clientCritical
	// Cancellation lag: each restart names the answer's author (Target);
	// match the superseded request of the restarted agent.
	var answers []event.Record
	for _, e := range events {
		switch e.Type {
		case event.TypeAnswerAccepted:
			answers = append(answers, e)
		case event.TypeTurnRestarted:
			var at time.Time
			for _, a := range answers {
				if a.Agent == e.Target {
					at = a.Time
				}
			}
			model := "sim-" + e.Agent
			best := time.Duration(-1)
			for _, r := range reqs {
				if r.Model == model && r.Outcome == "cancelled" && r.Start.Before(e.Time) && !r.End.Before(at) {
					if lag := r.End.Sub(at); best < 0 || lag < best {
						best = lag
					}
				}
			}
			if best >= 0 {
				f.cancelLags = append(f.cancelLags, best)
			}
		}
	}
	for _, r := range reqs {
		if r.Outcome == "cancelled" {
			f.cancelled++
			f.wastedOut += r.OutputTokens
			f.wastedIn += r.PromptTokens
		}
	}
	return f
}

// BenchmarkInterrupt measures how long after the caller cancels the run the
// simulator sees every in-flight request of a 16-agent team cancelled
// (target: under 100 ms), and how long Run takes to return.
//
//	go test -run '^$' -bench Interrupt -benchtime 5x ./internal/orchestrator/
func BenchmarkInterrupt(b *testing.B) {
	var worst, returned time.Duration
	for range b.N {
		sc, err := llmsim.ParseScenario([]byte("defaults:\n  always: {fault: hang}\nmodels: {}\n"))
		if err != nil {
			b.Fatal(err)
		}
		srv := llmsim.New(sc)
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, 16)
		for i := range ids {
			ids[i] = fmt.Sprintf("a%02d", i+1)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var cancelledAt time.Time
		go func() {
			_ = srv.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) == len(ids) })
			cancelledAt = time.Now()
			cancel()
		}()
		Run(ctx, "q", Options{Agents: simAgents(url, ids)})
		returned = max(returned, time.Since(cancelledAt))
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.WaitFor(wctx, func(rs []llmsim.Record) bool {
			for _, r := range rs {
				if r.End.IsZero() {
					return false
				}
			}
			return true
		})
		wcancel()
		for _, r := range srv.Requests() {
			if r.Outcome != "cancelled" {
				b.Fatalf("request %d ended %s", r.ID, r.Outcome)
			}
			worst = max(worst, r.End.Sub(cancelledAt))
		}
		srv.Close()
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "all_cancelled_max_ms")
	b.ReportMetric(float64(returned.Microseconds())/1000, "run_returned_max_ms")
}

func benchSettings(eager bool) coord.Settings {
	if eager {
		return coord.Settings{FirstAnswers: coord.FirstAnswersEager}
	}
	return coord.Settings{}
}
