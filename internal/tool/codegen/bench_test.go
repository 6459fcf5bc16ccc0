package codegen_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkCallThroughTheHub measures a tool call through the hub (HTTP
// on 127.0.0.1, the token checked, the tool looked up) against the same
// call made directly (Agent.Call, as the hub makes it), in the same run,
// and reports the ratio. A wrapper's own cost is Python's start-up, not
// measured here.
func BenchmarkCallThroughTheHub(b *testing.B) {
	b.StopTimer()
	_, a, h, token := setup(b)
	args := json.RawMessage(`{"city":"Oslo"}`)
	if _, err := a.Direct().Tools(b.Context()); err != nil {
		b.Fatal(err)
	}
	direct := func() {
		res, err := a.Call(b.Context(), "weather", "get-forecast", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	body := `{"server":"weather","tool":"get-forecast","arguments":{"city":"Oslo"}}`
	hub := func() {
		req, _ := http.NewRequestWithContext(b.Context(), "POST", h.URL()+"/call", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp)
		}
		resp.Body.Close()
	}
	direct() // warm: the server's connection is up
	hub()
	// Interleaved, so that a loaded machine slows both alike.
	var d, viaHub time.Duration
	b.StartTimer()
	for range b.N {
		start := time.Now()
		direct()
		mid := time.Now()
		hub()
		d, viaHub = d+mid.Sub(start), viaHub+time.Since(mid)
	}
	d, viaHub = d/time.Duration(b.N), viaHub/time.Duration(b.N)
	b.ReportMetric(float64(d.Microseconds()), "µs-direct/op")
	b.ReportMetric(float64(viaHub.Microseconds()), "µs-hub/op")
	b.ReportMetric(float64(viaHub)/float64(d), "hub/direct")
}
