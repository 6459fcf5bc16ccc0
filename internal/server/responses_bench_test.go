package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/store"
)

// BenchmarkResponsesKept measures what keeping Responses in the database
// costs a client: in each iteration, the same Responses request (a
// 2-turn conversation continued with previous_response_id, and a run that
// answers at once, so that what is left is the server's own work) goes
// alternately to a server that keeps responses in memory only and to one
// that writes them to SQLite as well, 32 times each. It reports the time
// per request of each and their ratio (db/memory).
func BenchmarkResponsesKept(b *testing.B) {
	answer := strings.Repeat("The capital of France is Paris. ", 32)
	run := func(ctx context.Context, r server.RunRequest) (*server.RunResult, error) {
		return &server.RunResult{Status: coord.RunCompleted, Final: answer, Winner: "a"}, nil
	}
	st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), store.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mem := httptest.NewServer(server.New(server.Deps{Run: run}).Handler())
	defer mem.Close()
	db := httptest.NewServer(server.New(server.Deps{Run: run, Responses: st}).Handler())
	defer db.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	post := func(url, body string) string {
		resp, err := hc.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(string(out), `{"id":"`), `"`)
		return id
	}
	prev := map[string]string{}
	for _, u := range []string{mem.URL, db.URL} {
		prev[u] = post(u, `{"model":"massgen","input":"What is the capital of France?"}`)
	}
	var tMem, tDB time.Duration
	const n = 32
	b.ResetTimer()
	for b.Loop() {
		for range n {
			for _, u := range []string{mem.URL, db.URL} {
				start := time.Now()
				post(u, fmt.Sprintf(`{"model":"massgen","input":"And of Italy?","previous_response_id":%q}`, prev[u]))
				if u == mem.URL {
					tMem += time.Since(start)
				} else {
					tDB += time.Since(start)
				}
			}
		}
	}
	reqs := float64(b.N * n)
	b.ReportMetric(float64(tMem.Microseconds())/reqs, "µs/req-memory")
	b.ReportMetric(float64(tDB.Microseconds())/reqs, "µs/req-db")
	b.ReportMetric(float64(tDB)/float64(tMem), "db/memory")
}
