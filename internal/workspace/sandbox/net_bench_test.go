package sandbox_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// benchEnv, when set, makes the test binary the benchmark's client
// inside the sandbox: "URL KEY N" — one untimed request, then N timed
// streamed chat completions, read to their end; it prints the N
// requests' nanoseconds.
const benchEnv = "MASSGEN_NET_BENCH"

func benchClient(spec string) int {
	f := strings.Fields(spec)
	if len(f) != 3 {
		fmt.Println("bad spec")
		return 2
	}
	n, _ := strconv.Atoi(f[2])
	body, _ := json.Marshal(map[string]any{"model": "bench", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": "What is the capital of France?"}}})
	one := func() error {
		req, _ := http.NewRequest("POST", f[0]+"/chat/completions", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+f[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		done := false
		var last string
		for sc.Scan() {
			done = done || strings.Contains(sc.Text(), "[DONE]")
			if sc.Text() != "" {
				last = sc.Text()
			}
		}
		if resp.StatusCode != 200 || !done {
			return fmt.Errorf("status %d, no [DONE] (%v); last line %q", resp.StatusCode, sc.Err(), last)
		}
		return nil
	}
	if err := one(); err != nil { // the connections, once
		fmt.Println(err)
		return 1
	}
	start := time.Now()
	for range n {
		if err := one(); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	fmt.Println(time.Since(start).Nanoseconds())
	return 0
}

// BenchmarkNetRelay is the relay's added latency per model request: a
// client in the sandbox makes streamed chat completions against the
// simulator on the host, directly (the host's network) and through its
// own network's relay (TCP in the namespace, the control socket's
// connection, massgen's reverse proxy putting the key in), in the same
// run; and the start-up of a sandbox with the relay against one without.
//
//	go test -run '^$' -bench NetRelay -benchtime 200x ./internal/workspace/sandbox/
func BenchmarkNetRelay(b *testing.B) {
	if _, err := sandbox.Bwrap(); err != nil {
		b.Skip(err)
	}
	_, base := simtest.Start(b, "")
	w := newWorld(b)
	bwrap, _ := sandbox.Bwrap()
	exe, _ := os.Executable()
	run := func(url, key string, n *sandbox.Net, reqs int) (time.Duration, time.Duration) {
		cmd := exec.Command(exe)
		sandbox.ProgramWith(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin", benchEnv + "=" + url + " " + key + " " + strconv.Itoa(reqs)},
			sandbox.ProgramOptions{Net: n})
		start := time.Now()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		wall := time.Since(start)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		ns, perr := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil || perr != nil {
			b.Fatalf("%v: %s\n%s", err, out, stderr.String())
		}
		return time.Duration(ns), wall
	}
	relayed := func(reqs int) (time.Duration, time.Duration) {
		n, err := sandbox.NewNet([]sandbox.Endpoint{{URL: base, Key: "sk-bench"}})
		if err != nil {
			b.Fatal(err)
		}
		defer n.Close()
		r := n.Routes()[0]
		return run(r.URL, r.Key, n, reqs)
	}
	// Rounds of both, alternating which goes first, so neither gets the
	// quieter moments of a shared machine.
	const rounds = 8
	per := max(b.N/rounds, 1)
	var d, r time.Duration
	b.ResetTimer()
	for i := range rounds {
		if i%2 == 0 {
			x, _ := run(base, "sk-bench", nil, per)
			y, _ := relayed(per)
			d, r = d+x, r+y
		} else {
			y, _ := relayed(per)
			x, _ := run(base, "sk-bench", nil, per)
			d, r = d+x, r+y
		}
	}
	b.StopTimer()
	// Start-up: a sandbox that makes no timed request, five times each.
	var dStart, rStart time.Duration
	for range 5 {
		_, w1 := run(base, "sk-bench", nil, 0)
		_, w2 := relayed(0)
		dStart, rStart = dStart+w1, rStart+w2
	}
	perReq := func(t time.Duration) float64 { return float64(t.Microseconds()) / float64(per*rounds) }
	b.ReportMetric(perReq(d), "direct-µs/req")
	b.ReportMetric(perReq(r), "relayed-µs/req")
	b.ReportMetric(perReq(r)-perReq(d), "added-µs/req")
	b.ReportMetric(float64(r)/float64(d), "ratio")
	b.ReportMetric(float64((rStart-dStart).Microseconds())/5000, "added-start-ms")
}
