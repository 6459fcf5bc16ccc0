package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/webui"
	_ "github.com/massgen/massgen/providers/chatcompat" // type: sim
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const token = "launch-token"

// fastTeam answers, votes and presents at once; slowTeam streams for a
// minute.
const fastTeam = `agents:
  - id: alpha
    backend: {type: sim, model: sim-alpha, ttft_ms: 5, tokens_per_second: 5000}
  - id: beta
    backend: {type: sim, model: sim-beta, ttft_ms: 5, tokens_per_second: 5000}
`

const slowTeam = `agents:
  - id: slow
    backend:
      type: sim
      model: sim-slow
      ttft_ms: 5
      tokens_per_second: 2
      scenario:
        models:
          sim-slow:
            steps:
              - text: "one word at a time, for a long while, so that the run is still going when it is cancelled"
                answer: "done"
`

// fixture is a UI on a loopback httptest server, in a fresh directory.
type fixture struct {
	ui   *webui.UI
	url  string // …/ui
	dir  string
	hc   *http.Client
	srv  *httptest.Server
	root string // the logs root
}

func start(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"fast.yaml": fastTeam, "slow.yaml": slowTeam} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ui := webui.New(webui.Deps{
		Env: app.Env{WorkDir: dir, Getenv: func(string) string { return "" }, DotEnvLoaded: true, Stderr: io.Discard},
		Configs: func() map[string]string {
			return map[string]string{"fast": filepath.Join(dir, "fast.yaml"), "slow": filepath.Join(dir, "slow.yaml")}
		},
		Token: token, AllowHost: server.NewHostPolicy("127.0.0.1", nil).Allows,
	})
	mux := http.NewServeMux()
	mux.Handle("/ui/", ui.Handler("/ui"))
	srv := httptest.NewServer(mux)
	f := &fixture{ui: ui, url: srv.URL + "/ui", dir: dir, hc: srv.Client(), srv: srv, root: app.LogsRoot(dir, "")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ui.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	return f
}

// do sends a request with the token, unless hdr sets Authorization.
func (f *fixture) do(t *testing.T, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (f *fixture) json(t *testing.T, method, path, body string, want int) map[string]any {
	t.Helper()
	resp := f.do(t, method, path, body, nil)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, resp.StatusCode, want, out)
	}
	return out
}

// sse is one Server-Sent Event.
type sse struct {
	id   uint64
	name string
	rec  event.Record
	data string
}

// events reads a run's events until the stream ends, or stop says so.
func (f *fixture) events(t *testing.T, run string, hdr map[string]string, stop func(sse) bool) []sse {
	t.Helper()
	resp := f.do(t, http.MethodGet, "/api/events?run="+run, "", hdr)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	var out []sse
	var cur sse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
			if cur.id > 0 {
				if err := json.Unmarshal([]byte(cur.data), &cur.rec); err != nil {
					t.Fatal(err)
				}
			}
		case line == "":
			out = append(out, cur)
			if cur.name == "end" || cur.name == "error" || stop != nil && stop(cur) {
				return out
			}
			cur = sse{}
		}
	}
	return out
}

func mustDeliver(evs []sse) []uint64 {
	var seqs []uint64
	for _, e := range evs {
		if e.id > 0 && !e.rec.Type.Droppable() {
			seqs = append(seqs, e.id)
		}
	}
	return seqs
}

// A run started from the page streams its events in the one schema, a
// page that comes back with Last-Event-ID gets the rest with nothing
// repeated, the run is listed, a follow-up is the next turn of the same
// session, and the run's log replays the same must-deliver events.
func TestStartFollowResumeAndReplay(t *testing.T) {
	f := start(t)
	run := f.json(t, http.MethodPost, "/api/runs", `{"config":"fast","question":"What is 2+2?"}`, http.StatusCreated)
	id := run["id"].(string)
	if run["session"] == "" || run["live"] != true || len(run["agents"].([]any)) != 2 {
		t.Fatalf("start answered %v", run)
	}
	all := f.events(t, id, nil, nil)
	if last := all[len(all)-1]; last.name != "end" {
		t.Fatalf("the stream ended with %q, not end", last.name)
	}
	var types []event.Type
	prev := uint64(0)
	for _, e := range all[:len(all)-1] {
		if e.id <= prev || e.rec.V != event.SchemaVersion || e.name != string(e.rec.Type) {
			t.Fatalf("event %d (%s) after %d, v %d", e.id, e.name, prev, e.rec.V)
		}
		prev = e.id
		types = append(types, e.rec.Type)
	}
	for _, want := range []event.Type{event.TypeRunStarted, event.TypeAnswerAccepted, event.TypeVoteAccepted,
		event.TypeWinnerSelected, event.TypeFinalAnswer, event.TypeRunFinished} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s event in %v", want, types)
		}
	}

	// Resume after the 4th event: the rest, nothing repeated.
	cut := all[3].id
	rest := f.events(t, id, map[string]string{"Last-Event-ID": strconv.FormatUint(cut, 10)}, nil)
	if rest[0].id != cut+1 && rest[0].id <= cut {
		t.Fatalf("resumed at %d after %d", rest[0].id, cut)
	}
	var want []uint64
	for _, s := range mustDeliver(all) {
		if s > cut {
			want = append(want, s)
		}
	}
	if got := mustDeliver(rest); !slices.Equal(got, want) {
		t.Fatalf("resumed must-deliver events %v, want %v", got, want)
	}

	// Listed, completed, with its log; the log replays the same events.
	list := f.json(t, http.MethodGet, "/api/runs", "", http.StatusOK)["runs"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["status"] != "completed" {
		t.Fatalf("runs: %v", list)
	}
	logName := list[0].(map[string]any)["log"].(string)
	replay := f.events(t, "log:"+logName, nil, nil)
	if got, want := mustDeliver(replay), mustDeliver(all); !slices.Equal(got, want) {
		t.Fatalf("the log replays %v, the live stream had %v", got, want)
	}

	// A follow-up: the same session's turn 2.
	next := f.json(t, http.MethodPost, "/api/runs", `{"question":"And 3+3?","session":"`+run["session"].(string)+`"}`, http.StatusCreated)
	if next["session"] != run["session"] || next["turn"] != float64(2) {
		t.Fatalf("follow-up %v of %v", next, run)
	}
	if evs := f.events(t, next["id"].(string), nil, nil); evs[len(evs)-1].name != "end" {
		t.Fatal("the follow-up's stream did not end")
	}
	// A new process (a fresh UI on the same directory) lists both turns
	// from the logs, with the session, and reopens them.
	ui2 := webui.New(webui.Deps{Env: app.Env{WorkDir: f.dir, Getenv: func(string) string { return "" }, DotEnvLoaded: true, Stderr: io.Discard}})
	srv2 := httptest.NewServer(http.StripPrefix("/ui", ui2.Handler("")))
	defer srv2.Close()
	f2 := &fixture{url: srv2.URL + "/ui", hc: srv2.Client()}
	past := f2.json(t, http.MethodGet, "/api/runs", "", http.StatusOK)["runs"].([]any)
	if len(past) != 2 {
		t.Fatalf("a new process lists %v", past)
	}
	for _, p := range past {
		p := p.(map[string]any)
		if p["live"] == true || p["session"] != run["session"] || !strings.HasPrefix(p["id"].(string), "log:") {
			t.Errorf("past run %v", p)
		}
	}
	if err := ui2.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Cancel stops a run mid-way: its stream ends with run_finished
// interrupted, and the run is listed so.
func TestCancel(t *testing.T) {
	f := start(t)
	run := f.json(t, http.MethodPost, "/api/runs", `{"config":"slow","question":"q"}`, http.StatusCreated)
	id := run["id"].(string)
	streaming := f.events(t, id, nil, func(e sse) bool { return e.rec.Type == event.TypeTextDelta })
	if streaming[len(streaming)-1].rec.Type != event.TypeTextDelta {
		t.Fatalf("no streamed text before the end: %v", streaming)
	}
	f.json(t, http.MethodPost, "/api/cancel", `{"run":"`+id+`"}`, http.StatusAccepted)
	all := f.events(t, id, nil, nil)
	fin := all[len(all)-2]
	if fin.rec.Type != event.TypeRunFinished || fin.rec.Status != "interrupted" {
		t.Fatalf("the run ended with %s %q", fin.rec.Type, fin.rec.Status)
	}
	meta := f.json(t, http.MethodGet, "/api/run?id="+id, "", http.StatusOK)
	if meta["status"] != "interrupted" {
		t.Fatalf("run %v", meta)
	}
	f.json(t, http.MethodPost, "/api/cancel", `{"run":"nope"}`, http.StatusNotFound)
}
