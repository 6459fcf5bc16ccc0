package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// massgen serve's background responses: without the key, or under another
// Host name, nobody may start one, read one (its question is a canary) or
// cancel one. The attempts are made while the run is in progress (its
// agents are slow); afterwards the run has completed, not been cancelled,
// and the log directory holds exactly the one run that was accepted. The
// same calls with the key work, so the refusals are real.
func TestBackgroundResponses(t *testing.T) {
	dir := tempDir(t)
	slow := "scenario: {defaults: {ttft_ms: 400}}"
	writeFiles(t, dir, map[string]string{"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a, " + slow + "}}\n  - {id: b, backend: {type: sim, model: sim-b, " + slow + "}}\n"})
	const key = "bg-key-0123456789abcdef"
	d := startDaemon(t, dir, nil, "serve", "--port", "0", "--config", "c.yaml", "--api-key", key, "--log-dir", "logs")
	question := "QUESTION" + canary[len(canary)-12:]
	call := func(t *testing.T, method, path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctxTimeout(t, 20*time.Second), method, "http://"+d.addr+path, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	auth := map[string]string{"Authorization": "Bearer " + key}
	body := fmt.Sprintf(`{"model":"massgen","input":%q,"background":true}`, question)

	attempt(t, "serve background: start one without the key", func(t *testing.T) {
		code, got := call(t, http.MethodPost, "/v1/responses", body, nil)
		if code != 401 || strings.Contains(got, "resp_") {
			t.Errorf("status %d, want 401: %s", code, tail(got, 300))
		}
		if logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*")); len(logs) != 0 {
			t.Errorf("a refused request started a run: %v", logs)
		}
	})

	code, got := call(t, http.MethodPost, "/v1/responses", body, auth)
	var r struct{ ID, Status string }
	if json.Unmarshal([]byte(got), &r); code != 200 || r.Status != "queued" {
		t.Fatalf("with the key: %d %s", code, tail(got, 300))
	}
	// The attempts go at a run in progress.
	for start := time.Now(); r.Status != "in_progress"; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 30*time.Second || r.Status == "completed" {
			t.Fatalf("the run never showed in progress (%q)", r.Status)
		}
		_, got := call(t, http.MethodGet, "/v1/responses/"+r.ID, "", auth)
		_ = json.Unmarshal([]byte(got), &r)
	}
	for _, a := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"read one without the key", http.MethodGet, "/v1/responses/" + r.ID, nil, 401},
		{"read one under another Host name", http.MethodGet, "/v1/responses/" + r.ID, map[string]string{"Authorization": auth["Authorization"], "Host": "evil.example"}, 403},
		{"cancel one without the key", http.MethodPost, "/v1/responses/" + r.ID + "/cancel", nil, 401},
		{"cancel one from a cross-origin page", http.MethodPost, "/v1/responses/" + r.ID + "/cancel", map[string]string{"Origin": "http://evil.example"}, 401},
		{"cancel a guessed id", http.MethodPost, "/v1/responses/resp_0123456789abcdef/cancel", auth, 404},
	} {
		attempt(t, "serve background: "+a.name, func(t *testing.T) {
			code, got := call(t, a.method, a.path, "", a.hdr)
			if code != a.want {
				t.Errorf("status %d, want %d: %s", code, a.want, tail(got, 300))
			}
			if strings.Contains(got, question) {
				t.Errorf("the refusal carries the question:\n%s", tail(got, 600))
			}
		})
	}
	// None of the refused cancels stopped it: it completes, and the key
	// reads it.
	deadline := time.Now().Add(time.Minute)
	for r.Status != "completed" {
		if time.Now().After(deadline) || r.Status == "cancelled" || r.Status == "failed" {
			t.Fatalf("the background response ended %q, want completed (a refused cancel stopped it?)", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
		_, got := call(t, http.MethodGet, "/v1/responses/"+r.ID, "", auth)
		_ = json.Unmarshal([]byte(got), &r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen", "sessions.db")); err != nil {
		t.Errorf("the sessions database: %v", err)
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "logs", "log_*")); len(logs) != 1 {
		t.Errorf("%d runs logged, want the one accepted: %v", len(logs), logs)
	}
}
