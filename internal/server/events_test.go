package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id   uint64
	name string
	rec  event.Record
}

// readSSE reads events from body until stop says so or the stream ends.
func readSSE(t *testing.T, body io.Reader, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.id > 0 {
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.rec); err != nil {
					t.Fatalf("data %q: %v", line, err)
				}
			}
		case line == "":
			out = append(out, cur)
			if stop(cur) {
				return out
			}
			cur = sseEvent{}
		}
	}
	return out
}

// A client follows a run's events live, drops the connection and comes
// back with Last-Event-ID: it gets the rest with no event twice and no
// answer, vote or final missing, every one in the one schema (v 2); the
// whole history is there again after the run; the key is required.
func TestRunEventsStreamLiveAndResumeFromLastEventID(t *testing.T) {
	_, url := simtest.Start(t, "defaults: {ttft_ms: 30, tokens_per_second: 600}\n")
	f := start(t, setup{deps: server.Deps{APIKey: "s3cret"}, key: "s3cret",
		configs: map[string]string{"team.yaml": team(url, "m-a", "m-b", "m-c")}})
	get := func(path string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx10(t), http.MethodGet, f.url+path, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	body := `{"model":"massgen/team","stream":true,"messages":[{"role":"user","content":"q"}]}`
	req, _ := http.NewRequestWithContext(ctx10(t), http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Content-Type", "application/json")
	chat, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	id := chat.Header.Get("X-Massgen-Run-Id")
	done := make(chan struct{})
	go func() { defer close(done); io.Copy(io.Discard, chat.Body); chat.Body.Close() }()

	first := get("/v1/runs/"+id+"/events", nil)
	if first.StatusCode != 200 || first.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", first.StatusCode, first.Header.Get("Content-Type"))
	}
	part1 := readSSE(t, first.Body, func(e sseEvent) bool { return e.rec.Type == event.TypeAnswerAccepted })
	first.Body.Close() // the client goes away mid-run
	last := part1[len(part1)-1].id
	second := get("/v1/runs/"+id+"/events", map[string]string{"Last-Event-ID": strconv.FormatUint(last, 10)})
	part2 := readSSE(t, second.Body, func(e sseEvent) bool { return e.name == "end" || e.name == "error" })
	second.Body.Close()
	<-done

	got := append(part1, part2...)
	if end := got[len(got)-1]; end.name != "end" {
		t.Fatalf("the stream ended with %+v, want an end event", end)
	}
	seen := map[uint64]bool{}
	var prev uint64
	for _, e := range got[:len(got)-1] {
		if e.id <= prev || seen[e.id] {
			t.Fatalf("event %d after %d: out of order or repeated", e.id, prev)
		}
		seen[e.id], prev = true, e.id
		if e.rec.V != event.SchemaVersion || e.rec.Seq != e.id || string(e.rec.Type) != e.name {
			t.Errorf("event %d: %+v is not in schema v%d with its id and type", e.id, e.rec, event.SchemaVersion)
		}
	}
	// Every must-deliver event of the run's log reached the client.
	info := getJSONMap(t, f, "/v1/runs/"+id)
	logDir, _ := info["meta"].(map[string]any)["log_dir"].(string)
	b, err := os.ReadFile(filepath.Join(logDir, "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[event.Type]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r event.Record
		if json.Unmarshal([]byte(line), &r) == nil && !r.Type.Droppable() {
			if !seen[r.Seq] {
				t.Errorf("%s event %d is in the log but never reached the client", r.Type, r.Seq)
			}
			kinds[r.Type]++
		}
	}
	for _, k := range []event.Type{event.TypeRunStarted, event.TypeAnswerAccepted, event.TypeVoteAccepted, event.TypeFinalAnswer, event.TypeRunFinished} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in the run", k)
		}
	}

	// After the run, the whole history again, without the deltas.
	again := get("/v1/runs/"+id+"/events?deltas=false", nil)
	all := readSSE(t, again.Body, func(e sseEvent) bool { return e.name == "end" || e.name == "error" })
	again.Body.Close()
	if all[0].id != 1 || all[len(all)-1].name != "end" {
		t.Errorf("history after the run: first %d, last %q", all[0].id, all[len(all)-1].name)
	}
	for _, e := range all[:len(all)-1] {
		if e.rec.Type.Droppable() {
			t.Errorf("deltas=false still sent %s", e.rec.Type)
		}
	}

	// The key is required.
	req, _ = http.NewRequestWithContext(ctx10(t), http.MethodGet, f.url+"/v1/runs/"+id+"/events", nil)
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the key: %d, want 401", resp.StatusCode)
	}
}

func getJSONMap(t *testing.T, f *fixture, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx10(t), http.MethodGet, f.url+path, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
