package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/cli"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/server"
)

// BenchmarkServer sends N concurrent chat completions through massgen serve
// (the real CLI runner, without logs) to a one-agent team on a zero-latency
// simulator, and, in the same iteration and at the same N, makes the same
// number of sequential model calls per client directly to the simulator
// with the same SDK path the agents use (each iteration: at least 256
// requests, N at a time). It reports:
//
//   - req/s, p50-ms, p99-ms: massgen requests (each a whole run);
//   - calls/run: model calls per run, counted from the simulator's log;
//   - direct-p50-ms, direct-p99-ms: calls/run sequential direct calls;
//   - added-p50-us/call, added-p99-us/call: (massgen − direct) / calls/run,
//     the latency massgen adds per model call (target: p99 < 1 ms at 256);
//   - cpu-us/call, direct-cpu-us/call: CPU time of the whole process
//     (client, massgen, simulator) per model call on each path; on a
//     machine with few cores the zero-latency simulator saturates them at
//     N=64 already, and the added latency then measures CPU cost × N /
//     cores rather than waiting;
//   - heap-KiB/run, goroutines/run: heap in use and goroutines per run in
//     flight, while N runs hang upstream, net of N direct hanging calls
//     (which carry the simulator's and the HTTP client's share).
//
// Run it with:
//
//	go test -run '^$' -bench Server -benchtime 1x ./internal/server/
func BenchmarkServer(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(orchestrator.GCPercent)) // as the massgen binary runs
	for _, n := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { benchServer(b, n) })
	}
}

type benchRig struct {
	url    string
	hc     *http.Client
	direct llm.Model
	sim    *llmsim.Server
}

func newBenchRig(b *testing.B, n int, scenario string, agents int) *benchRig {
	var sc *llmsim.Scenario
	if scenario != "" {
		var err error
		if sc, err = llmsim.ParseScenario([]byte(scenario)); err != nil {
			b.Fatal(err)
		}
	}
	sim := llmsim.New(sc)
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	cfg := filepath.Join(dir, "bench.yaml")
	body := "agents:\n"
	for i := range agents {
		body += fmt.Sprintf("  - id: agent%d\n    backend: {type: chatcompletion, model: bench-model, base_url: %q}\n", i+1, base)
	}
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	env := &cli.Env{Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}, Stdout: io.Discard, Stderr: io.Discard, WorkDir: dir}
	srv := server.New(server.Deps{Run: cli.NewServeRunner(env, cli.ServeOptions{Config: cfg, NoLogs: true}),
		Configs: map[string]string{}, MaxConcurrent: n, MaxQueue: n})
	hs := httptest.NewServer(srv.Handler())
	tr := &http.Transport{MaxIdleConns: 2 * n, MaxIdleConnsPerHost: 2 * n}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		hs.Close()
		tr.CloseIdleConnections()
		_ = sim.Close()
	})
	return &benchRig{url: hs.URL, hc: &http.Client{Transport: tr}, sim: sim,
		direct: chatcompat.New(chatcompat.Options{Provider: "sim", BaseURL: base, APIKey: "sim", Model: "bench-model", Stream: true})}
}

const benchBody = `{"model":"massgen","messages":[{"role":"user","content":"What is the capital of France?"}]}`

// viaMassgen is one chat completion through the server.
func (r *benchRig) viaMassgen(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/v1/chat/completions", strings.NewReader(benchBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return nil
}

// viaDirect is k sequential model calls straight to the simulator.
func (r *benchRig) viaDirect(ctx context.Context, k int) error {
	for range k {
		for _, err := range r.direct.Stream(ctx, &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a helpful assistant."},
			{Role: llm.RoleUser, Content: "What is the capital of France?"}}}) {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// concurrently runs f n times at once and returns each call's latency.
func concurrently(b *testing.B, n int, f func() error) []time.Duration {
	lat := make([]time.Duration, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			t := time.Now()
			if err := f(); err != nil {
				errs <- err
			}
			lat[i] = time.Since(t)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return lat
}

func pct(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchServer(b *testing.B, n int) { benchServerWith(b, n, "", true) }

// BenchmarkServerWithLatency is BenchmarkServer at N=256 against a
// simulator with provider-like latency (100 ms to first token, 200
// tokens/s) instead of none: the machine is then not saturated, and the
// added latency per model call is massgen's own, not CPU queueing.
//
//	go test -run '^$' -bench ServerWithLatency -benchtime 1x ./internal/server/
func BenchmarkServerWithLatency(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(orchestrator.GCPercent))
	benchServerWith(b, 256, "defaults: {ttft_ms: 100, tokens_per_second: 200}\nmodels: {}\n", false)
}

func benchServerWith(b *testing.B, n int, scenario string, inFlight bool) {
	r := newBenchRig(b, n, scenario, 1)
	ctx := b.Context()
	before := len(r.sim.Requests())
	concurrently(b, n, func() error { return r.viaMassgen(ctx) }) // warm up: connections, first runs
	k := (len(r.sim.Requests()) - before) / n
	concurrently(b, n, func() error { return r.viaDirect(ctx, k) })

	// Every iteration sends at least 256 requests, N at a time, so that
	// percentiles at N=1 mean something.
	rounds := max(1, 256/n)
	var mg, direct []time.Duration
	var wall, cpuMG, cpuDirect time.Duration
	before = len(r.sim.Requests())
	b.ResetTimer()
	for range b.N {
		for range rounds {
			t, c := time.Now(), cpuTime()
			mg = append(mg, concurrently(b, n, func() error { return r.viaMassgen(ctx) })...)
			wall += time.Since(t)
			c2 := cpuTime()
			cpuMG += c2 - c
			direct = append(direct, concurrently(b, n, func() error { return r.viaDirect(ctx, k) })...)
			cpuDirect += cpuTime() - c2
		}
	}
	b.StopTimer()
	calls := len(r.sim.Requests()) - before - len(direct)*k // the simulator served both
	perRun := float64(calls) / float64(len(mg))
	b.ReportMetric(float64(len(mg))/wall.Seconds(), "req/s")
	b.ReportMetric(ms(pct(mg, 0.5)), "p50-ms")
	b.ReportMetric(ms(pct(mg, 0.99)), "p99-ms")
	b.ReportMetric(perRun, "calls/run")
	b.ReportMetric(ms(pct(direct, 0.5)), "direct-p50-ms")
	b.ReportMetric(ms(pct(direct, 0.99)), "direct-p99-ms")
	b.ReportMetric(float64(pct(mg, 0.5)-pct(direct, 0.5))/perRun/1e3, "added-p50-us/call")
	b.ReportMetric(float64(pct(mg, 0.99)-pct(direct, 0.99))/perRun/1e3, "added-p99-us/call")
	// CPU per model call of the whole process (load generator, massgen and
	// simulator share it): when it saturates the machine's cores, latency
	// grows with N for both paths, and faster for the costlier one.
	if cpuMG > 0 {
		b.ReportMetric(float64(cpuMG)/float64(calls)/1e3, "cpu-us/call")
		b.ReportMetric(float64(cpuDirect)/float64(len(direct)*k)/1e3, "direct-cpu-us/call")
	}

	if !inFlight {
		return
	}
	heap, goroutines := inFlightCost(b, n)
	b.ReportMetric(heap/1024, "heap-KiB/run")
	b.ReportMetric(goroutines, "goroutines/run")
}

// inFlightCost measures heap in use and goroutines per massgen run in
// flight: N runs hang upstream, minus N direct calls hanging the same way.
func inFlightCost(b *testing.B, n int) (heapPerRun, goroutinesPerRun float64) {
	r := newBenchRig(b, n, hangScenario, 1)
	hung := func(want int) {
		ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		defer cancel()
		if err := r.sim.WaitFor(ctx, func(rs []llmsim.Record) bool {
			c := 0
			for _, x := range rs {
				if !x.FirstByte.IsZero() && x.End.IsZero() {
					c++
				}
			}
			return c == want
		}); err != nil {
			b.Fatalf("waiting for %d hanging requests: %v", want, err)
		}
	}
	measure := func(start func(ctx context.Context)) (heap, goroutines float64) {
		ctx, cancel := context.WithCancel(b.Context())
		h0, g0 := heapInUse()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { start(ctx) })
		}
		hung(n)
		h1, g1 := heapInUse()
		cancel()
		wg.Wait()
		hung(0)
		return float64(h1-h0) / float64(n), float64(g1-g0) / float64(n)
	}
	// Connections first, so that neither measurement pays for dialling.
	measure(func(ctx context.Context) { _ = r.viaMassgen(ctx) })
	measure(func(ctx context.Context) { _ = r.viaDirect(ctx, 1) })
	hm, gm := measure(func(ctx context.Context) { _ = r.viaMassgen(ctx) })
	hd, gd := measure(func(ctx context.Context) { _ = r.viaDirect(ctx, 1) })
	b.Logf("N=%d in flight: massgen %.0f KiB and %.1f goroutines per run; a direct hanging call %.0f KiB and %.1f goroutines",
		n, hm/1024, gm, hd/1024, gd)
	return hm - hd, gm - gd
}

func heapInUse() (int64, int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse), runtime.NumGoroutine()
}

// BenchmarkDisconnect measures how fast a client's disconnect reaches the
// providers: N clients each stream a run of a three-agent team whose model
// requests hang, all disconnect at the same moment, and the simulator
// records when each of the 3N upstream requests ended (cancelled). Target
// (DESIGN.md §2): every request cancelled within 100 ms.
//
//	go test -run '^$' -bench Disconnect -benchtime 10x ./internal/server/
func BenchmarkDisconnect(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			r := newBenchRig(b, n, hangScenario, 3)
			var lags []time.Duration
			for range b.N {
				lags = append(lags, disconnectOnce(b, r, n)...)
			}
			b.ReportMetric(ms(pct(lags, 0.5)), "p50-ms")
			b.ReportMetric(ms(pct(lags, 0.99)), "p99-ms")
			b.ReportMetric(ms(slices.Max(lags)), "max-ms")
		})
	}
}

func disconnectOnce(b *testing.B, r *benchRig, n int) []time.Duration {
	first := len(r.sim.Requests())
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/v1/chat/completions",
				strings.NewReader(`{"model":"massgen","stream":true,"messages":[{"role":"user","content":"q"}]}`))
			resp, err := r.hc.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body) // until the disconnect
			resp.Body.Close()
		})
	}
	wctx, wcancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer wcancel()
	if err := r.sim.WaitFor(wctx, func(rs []llmsim.Record) bool {
		c := 0
		for _, x := range rs[first:] {
			if !x.FirstByte.IsZero() {
				c++
			}
		}
		return c == 3*n
	}); err != nil {
		b.Fatalf("waiting for %d hanging requests: %v", 3*n, err)
	}
	at := time.Now()
	cancel()
	wg.Wait()
	if err := r.sim.WaitFor(wctx, func(rs []llmsim.Record) bool {
		for _, x := range rs[first:] {
			if x.End.IsZero() {
				return false
			}
		}
		return true
	}); err != nil {
		b.Fatalf("upstream requests still in flight after the disconnect: %v", err)
	}
	var lags []time.Duration
	for _, x := range r.sim.Requests()[first:] {
		if x.Outcome != llmsim.OutcomeCancelled {
			b.Fatalf("request %d: %s", x.ID, x.Outcome)
		}
		lags = append(lags, x.End.Sub(at))
	}
	return lags
}
