package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/cli"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/telemetry/otlp"
)

// A client of massgen serve that sends a traceparent header finds the run
// in its own trace: the run span is the child of the client's span. A
// request without one, or with a malformed one, starts a trace of its own.
func TestServeRunsJoinTheClientsTrace(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	rcv := startReceiver(t)
	t.Cleanup(func() {
		if err := otlp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	vars := map[string]string{"HOME": dir, "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_METRICS_EXPORTER": "none"}
	env := &cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: io.Discard, Stderr: io.Discard, WorkDir: dir}
	runner := cli.NewServeRunner(env, cli.ServeOptions{Config: "@examples/sim_three_agents", NoLogs: true})
	srv := server.New(server.Deps{Run: runner.Run})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		_ = srv.Shutdown(context.Background())
		hs.Close()
		runner.Close()
	})
	ask := func(traceparent string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", hs.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"massgen","messages":[{"role":"user","content":"q"}]}`))
		req.Header.Set("Content-Type", "application/json")
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	const traceID, callerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	ask("00-" + traceID + "-" + callerSpan + "-01")
	ask("00-not-a-trace-01")
	ask("")
	_, spans := rcv.spans(t)
	var roots []span
	for _, s := range spans {
		if s.name == "invoke_agent massgen" {
			roots = append(roots, s)
		}
	}
	if len(roots) != 3 {
		t.Fatalf("%d run spans, want 3", len(roots))
	}
	inCallers := 0
	for _, r := range roots {
		if r.trace == traceID {
			inCallers++
			if r.parent != callerSpan {
				t.Errorf("the run span in the client's trace has parent %q, want the client's span %s", r.parent, callerSpan)
			}
		} else if r.parent != "" {
			t.Errorf("a run without the client's trace has a parent: %+v", r)
		}
	}
	if inCallers != 1 {
		t.Errorf("%d runs in the client's trace, want exactly the one that sent it", inCallers)
	}
}
