package attack

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// massgen serve puts a client's traceparent and tracestate into the run's
// telemetry: a client cannot smuggle text through them into anything
// else. Each request carries the canary in its trace headers (malformed,
// after a version-00 traceparent's flags, in tracestate); each run still
// completes, and the canary is in no response, no file of the run's logs,
// the sessions database or the serve output.
func TestTraceHeadersCarryNothingElsewhere(t *testing.T) {
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a}}\n  - {id: b, backend: {type: sim, model: sim-b}}\n"})
	const key = "trace-key-0123456789abcdef"
	d := startDaemon(t, dir, nil, "serve", "--port", "0", "--config", "c.yaml", "--api-key", key, "--log-dir", "logs")
	mark := "TRACE" + canary[len(canary)-12:]
	valid := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, a := range []struct{ name, parent, state string }{
		{"a traceparent that is the canary", mark, ""},
		{"text after a version-00 traceparent's flags", valid + "-" + mark, ""},
		{"a tracestate beside a valid traceparent", valid, "k=" + mark},
	} {
		attempt(t, "trace headers: "+a.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctxTimeout(t, time.Minute), http.MethodPost, "http://"+d.addr+"/v1/chat/completions",
				bytes.NewBufferString(`{"model":"massgen","messages":[{"role":"user","content":"What is 2+2?"}]}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", a.parent)
			if a.state != "" {
				req.Header.Set("tracestate", a.state)
			}
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.Contains(string(body), mark) {
				t.Errorf("status %d, body %s", resp.StatusCode, tail(string(body), 300))
			}
			for k, vs := range resp.Header {
				if strings.Contains(strings.Join(vs, " "), mark) {
					t.Errorf("response header %s carries the header's text", k)
				}
			}
		})
	}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(mark)) {
			t.Errorf("%s holds a trace header's text", p)
		}
		return nil
	})
	if strings.Contains(d.stderr.String(), mark) {
		t.Errorf("serve's output holds a trace header's text")
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "logs", "log_*")); len(logs) != 3 {
		t.Errorf("%d runs logged, want the 3 requests", len(logs))
	}
}
