package attack

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// massgen serve's event feed (GET /v1/runs/{id}/events) streams a run's
// question, answers and votes: a hostile local user or a web page must not
// read it without the key, under another Host name, from a guessed run, or
// by sending a malformed resume point. Each refusal is checked to carry no
// event of the run (its question is a canary); the feed itself works with
// the key, so the refusals are real.
func TestRunEventsFeed(t *testing.T) {
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a}}\n  - {id: b, backend: {type: sim, model: sim-b}}\n"})
	const key = "feed-key-0123456789abcdef"
	d := startDaemon(t, dir, nil, "serve", "--port", "0", "--config", "c.yaml", "--api-key", key, "--log-dir", "logs")
	question := "QUESTION" + canary[len(canary)-12:]
	body := fmt.Sprintf(`{"model":"massgen","messages":[{"role":"user","content":%q}]}`, question)
	req, _ := http.NewRequestWithContext(ctxTimeout(t, time.Minute), http.MethodPost, "http://"+d.addr+"/v1/chat/completions", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	run := resp.Header.Get("X-Massgen-Run-Id")
	if resp.StatusCode != 200 || run == "" {
		t.Fatalf("the run did not complete: %d, run id %q", resp.StatusCode, run)
	}
	get := func(t *testing.T, path string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctxTimeout(t, 20*time.Second), http.MethodGet, "http://"+d.addr+path, nil)
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
	feed := "/v1/runs/" + run + "/events"
	auth := "Bearer " + key
	for _, a := range []struct {
		name string
		path string
		hdr  map[string]string
		want int
	}{
		{"no key", feed, nil, 401},
		{"a wrong key", feed, map[string]string{"Authorization": "Bearer wrong-key-0123456789"}, 401},
		{"a cross-origin page without the key", feed, map[string]string{"Origin": "http://evil.example"}, 401},
		{"the key under another Host name (DNS rebinding)", feed, map[string]string{"Authorization": auth, "Host": "evil.example"}, 403},
		{"a guessed run id", "/v1/runs/0123456789abcdef/events", map[string]string{"Authorization": auth}, 404},
		{"a malformed Last-Event-ID", feed, map[string]string{"Authorization": auth, "Last-Event-ID": "1; DROP"}, 400},
		{"a malformed from", feed + "?from=-1", map[string]string{"Authorization": auth}, 400},
	} {
		attempt(t, "serve events feed: "+a.name, func(t *testing.T) {
			code, got := get(t, a.path, a.hdr)
			if code != a.want {
				t.Errorf("status %d, want %d: %s", code, a.want, tail(got, 300))
			}
			if strings.Contains(got, question) || strings.Contains(got, "new_answer") {
				t.Errorf("the refusal carries the run's events:\n%s", tail(got, 600))
			}
		})
	}
	// The feed with the key: the events are there, and hold no secret.
	code, got := get(t, feed+"?deltas=false", map[string]string{"Authorization": auth})
	if code != 200 || !strings.Contains(got, question) || !strings.Contains(got, "event: end") {
		t.Fatalf("the feed with the key: %d\n%s", code, tail(got, 600))
	}
	if strings.Contains(got, key) || strings.Contains(got, canary) {
		t.Error("the feed holds the API key or a canary")
	}
	noCanary(t, result{dir: dir, stderr: d.stderr.String()})
}
