package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
)

// Auth, limits, disconnects and shutdown, through the official client
// against the CLI's runner.

func TestAPIKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{{"", 401}, {"wrong", 401}, {"s3cret", 200}} {
		f := start(t, setup{deps: server.Deps{APIKey: "s3cret"}, key: tc.key})
		opts := []option.RequestOption{}
		if tc.key == "" {
			opts = append(opts, option.WithHeaderDel("Authorization"))
		}
		_, err := f.client.Models.List(ctx10(t), opts...)
		if got := statusOf(err); (tc.want == 200 && err != nil) || (tc.want != 200 && got != tc.want) {
			t.Errorf("key %q: err %v, want %d", tc.key, err, tc.want)
		}
		// /health needs no key.
		getJSON(t, f, "/health", 200, nil)
	}
	// Without a configured key, anything goes.
	f := start(t, setup{})
	if _, err := f.client.Models.List(ctx10(t)); err != nil {
		t.Error(err)
	}
}

func TestBodyTooLargeIs413(t *testing.T) {
	f := start(t, setup{deps: server.Deps{MaxBodyBytes: 4096}})
	_, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", strings.Repeat("x", 5000)))
	if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 413 || e.Code != "request_too_large" {
		t.Fatalf("err = %v", err)
	}
}

const hangScenario = `
models:
  "*":
    always: {fault: hang}
`

// startHanging starts a streaming request whose run hangs upstream, and
// returns once the run has started (the role chunk arrived).
func startHanging(t *testing.T, f *fixture, model string) (cancel context.CancelFunc, runID string, rest func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx10(t))
	var hr *http.Response
	st := f.client.Chat.Completions.NewStreaming(ctx, ask(model, "hang"), option.WithResponseInto(&hr))
	if !st.Next() {
		cancel()
		t.Fatalf("no first chunk: %v", st.Err())
	}
	if st.Current().Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %s", st.Current().RawJSON())
	}
	return cancel, hr.Header.Get("X-Massgen-Run-Id"), func() error {
		defer st.Close()
		for st.Next() {
		}
		return st.Err()
	}
}

func TestClientDisconnectCancelsEveryUpstreamRequestAtOnce(t *testing.T) {
	sim, base := simtest.Start(t, hangScenario)
	f := start(t, setup{configs: map[string]string{"hang.yaml": team(base, "m-a", "m-b", "m-c")}})
	cancel, id, rest := startHanging(t, f, "massgen/hang")
	wctx := ctx10(t)
	if err := sim.WaitFor(wctx, func(rs []llmsim.Record) bool {
		n := 0
		for _, r := range rs {
			if !r.FirstByte.IsZero() {
				n++
			}
		}
		return n == 3
	}); err != nil {
		t.Fatalf("three upstream requests never started: %v", err)
	}
	var st struct {
		Meta struct{ Status string } `json:"meta"`
	}
	getJSON(t, f, "/v1/runs/"+id, 200, &st)
	if st.Meta.Status != "running" {
		t.Errorf("run status while hanging = %q", st.Meta.Status)
	}

	disconnect := time.Now()
	cancel()
	_ = rest()
	if err := sim.WaitFor(wctx, func(rs []llmsim.Record) bool {
		for _, r := range rs {
			if r.End.IsZero() {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatalf("upstream requests still in flight after the disconnect: %v", err)
	}
	var worst time.Duration
	for _, r := range sim.Requests() {
		if r.Outcome != llmsim.OutcomeCancelled {
			t.Errorf("request %d outcome %s", r.ID, r.Outcome)
		}
		worst = max(worst, r.End.Sub(disconnect))
	}
	t.Logf("every upstream request cancelled within %v of the client's disconnect", worst)
	if worst > time.Second { // the target is 100 ms; the benchmark measures it, a loaded CI machine must not flake
		t.Errorf("upstream requests cancelled %v after the disconnect", worst)
	}
	// The run ends as interrupted.
	deadline := time.Now().Add(5 * time.Second)
	for st.Meta.Status != "interrupted" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		getJSON(t, f, "/v1/runs/"+id, 200, &st)
	}
	if st.Meta.Status != "interrupted" {
		t.Errorf("run status after the disconnect = %q", st.Meta.Status)
	}
}

func TestConcurrencyLimitAndQueue(t *testing.T) {
	_, base := simtest.Start(t, hangScenario)
	f := start(t, setup{deps: server.Deps{MaxConcurrent: 1, MaxQueue: 0},
		configs: map[string]string{"hang.yaml": team(base, "m-a")}})
	cancel, _, rest := startHanging(t, f, "massgen/hang")
	defer func() { cancel(); _ = rest() }()
	_, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", "q"))
	if e, ok := errors.AsType[*openai.Error](err); !ok || e.StatusCode != 429 || e.Code != "rate_limit_exceeded" {
		t.Fatalf("second request: err = %v, want 429", err)
	}
}

func TestQueuedRequestRunsWhenASlotFreesAndLeavesTheQueueOnDisconnect(t *testing.T) {
	_, base := simtest.Start(t, hangScenario)
	f := start(t, setup{deps: server.Deps{MaxConcurrent: 1, MaxQueue: 1},
		configs: map[string]string{"hang.yaml": team(base, "m-a")}})
	cancel1, _, rest1 := startHanging(t, f, "massgen/hang")

	queued := func(want int) {
		t.Helper()
		var h struct{ Queued int }
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			getJSON(t, f, "/health", 200, &h)
			if h.Queued == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("queued = %d, want %d", h.Queued, want)
			}
		}
	}
	// A waiter that disconnects leaves the queue.
	ctx2, cancel2 := context.WithCancel(ctx10(t))
	done2 := make(chan error, 1)
	go func() { _, err := f.client.Chat.Completions.New(ctx2, ask("massgen", "q")); done2 <- err }()
	queued(1)
	if _, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", "q")); statusOf(err) != 429 {
		t.Errorf("with the queue full: err = %v, want 429", err)
	}
	cancel2()
	<-done2
	queued(0)

	// A waiter gets the slot when the running request ends.
	done3 := make(chan error, 1)
	var resp3 *openai.ChatCompletion
	go func() {
		var err error
		resp3, err = f.client.Chat.Completions.New(ctx10(t), ask("massgen", "What is the capital of France?"))
		done3 <- err
	}()
	queued(1)
	cancel1()
	_ = rest1()
	if err := <-done3; err != nil || resp3.Choices[0].Message.Content == "" {
		t.Fatalf("queued request: %v", err)
	}
}

func TestGracefulShutdownLetsRunsFinishAndTurnsNewRequestsAway(t *testing.T) {
	_, base := simtest.Start(t, "defaults: {ttft_ms: 150}\n")
	f := start(t, setup{configs: map[string]string{"slow.yaml": team(base, "m-a")}})
	type result struct {
		resp *openai.ChatCompletion
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen/slow", "q"))
		done <- result{r, err}
	}()
	// Wait until the run is in flight.
	var h struct{ Running int }
	for deadline := time.Now().Add(5 * time.Second); h.Running == 0; time.Sleep(5 * time.Millisecond) {
		getJSON(t, f, "/health", 200, &h)
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- f.srv.Shutdown(ctx)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, err := f.hc.Get(f.url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 503 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/health never turned 503")
		}
	}
	if _, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", "q")); statusOf(err) != 503 {
		t.Errorf("new request while shutting down: %v, want 503", err)
	}
	r := <-done
	if r.err != nil || r.resp.Choices[0].Message.Content == "" {
		t.Errorf("the run in flight did not finish: %v", r.err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
}

func TestShutdownCancelsRunsAfterTheGracePeriod(t *testing.T) {
	sim, base := simtest.Start(t, hangScenario)
	f := start(t, setup{configs: map[string]string{"hang.yaml": team(base, "m-a", "m-b")}})
	cancel, _, rest := startHanging(t, f, "massgen/hang")
	defer cancel()
	ctx, cancelGrace := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelGrace()
	began := time.Now()
	err := f.srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the grace period's DeadlineExceeded", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Shutdown took %v", took)
	}
	if err := rest(); err == nil || !strings.Contains(err.Error(), "server_shutting_down") {
		t.Errorf("stream ended with %v, want the shutdown error", err)
	}
	if err := sim.WaitFor(ctx10(t), func(rs []llmsim.Record) bool {
		for _, r := range rs {
			if r.End.IsZero() {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatalf("upstream requests still in flight after Shutdown: %v", err)
	}
	for _, r := range sim.Requests() {
		if r.Outcome != llmsim.OutcomeCancelled {
			t.Errorf("upstream request %d: %s", r.ID, r.Outcome)
		}
	}
}

// A client that sends its headers and then trickles (or stops sending) the
// body gets 408 once the body timeout is over, instead of holding a
// handler — and Shutdown — for as long as it keeps the connection open.
func TestStalledRequestBodyGets408(t *testing.T) {
	var c countingRunner
	f := start(t, setup{deps: server.Deps{Run: c.run, BodyTimeout: 50 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second)) // the test's bound, not the server's
	if _, err := io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":"request_timeout"`) {
		t.Errorf("stalled body: %d %s, want 408 request_timeout", resp.StatusCode, b)
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("a stalled request started %d runs", n)
	}
	// A body that arrives in time is read as before.
	if _, err := f.client.Chat.Completions.New(ctx10(t), ask("massgen", "q")); err != nil {
		t.Errorf("a prompt body: %v", err)
	}
}
