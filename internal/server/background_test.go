package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/server"
)

// bgResponse is what the tests read of a Response.
type bgResponse struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Background bool   `json:"background"`
	Output     []struct {
		Type    string `json:"type"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Massgen *struct {
		Winner string `json:"winner"`
	} `json:"massgen"`
}

func (r bgResponse) text() string {
	var b strings.Builder
	for _, o := range r.Output {
		if o.Type == "message" {
			for _, c := range o.Content {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

// post sends a JSON body to path and decodes the answer into v.
func post(t *testing.T, f *fixture, path, body string, v any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("POST %s: %d %s: %v", path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// pollUntil GETs response id until its status is one of want, and returns
// it; it fails after a minute.
func pollUntil(t *testing.T, f *fixture, id string, want ...string) bgResponse {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var r bgResponse
		getJSON(t, f, "/v1/responses/"+id, http.StatusOK, &r)
		for _, w := range want {
			if r.Status == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("response %s is still %q after a minute; want %q", id, r.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A background request is answered at once, queued; the run goes on
// without the client, and GET /v1/responses/{id} gives the completed
// Response with the answer once it has ended.
func TestABackgroundResponseIsAnsweredAtOnceAndPolledToItsEnd(t *testing.T) {
	_, url := simtest.Start(t, "defaults: {ttft_ms: 40}\n")
	f := start(t, setup{configs: map[string]string{"team.yaml": team(url, "m-a", "m-b")}})
	var r bgResponse
	if code := post(t, f, "/v1/responses", `{"model":"massgen/team","input":"What is 2+2?","background":true}`, &r); code != 200 {
		t.Fatalf("POST: %d %+v", code, r)
	}
	if r.Status != "queued" || !r.Background || !strings.HasPrefix(r.ID, "resp_") || len(r.Output) != 0 {
		t.Fatalf("the first answer is %+v; want a queued background Response with no output yet", r)
	}
	done := pollUntil(t, f, r.ID, "completed", "failed")
	if done.Status != "completed" || done.text() == "" || !done.Background || done.Massgen == nil || done.Massgen.Winner == "" {
		t.Fatalf("the polled Response: %+v; want completed, with the winner's answer", done)
	}
	// Only a background response in progress can be cancelled; a
	// finished one is returned as it ended.
	var again bgResponse
	if code := post(t, f, "/v1/responses/"+r.ID+"/cancel", ``, &again); code != 200 || again.Status != "completed" {
		t.Errorf("cancelling a finished background response: %d %+v; want it returned as completed", code, again)
	}
}

// What would fail the run fails the request itself, and a background
// response that streams or is not stored is refused with the reason.
func TestBackgroundRequestsThatCannotRunAreRefusedAtOnce(t *testing.T) {
	_, url := simtest.Start(t, "")
	f := start(t, setup{configs: map[string]string{"team.yaml": team(url, "m-a")}})
	for _, c := range []struct {
		body, param string
		status      int
	}{
		{`{"model":"massgen/nope","input":"q","background":true}`, "model", 404},
		{`{"model":"massgen/team","input":"q","background":true,"stream":true}`, "stream", 400},
		{`{"model":"massgen/team","input":"q","background":true,"store":false}`, "store", 400},
	} {
		var e struct {
			Error struct{ Param, Message string }
		}
		if code := post(t, f, "/v1/responses", c.body, &e); code != c.status || e.Error.Param != c.param || e.Error.Message == "" {
			t.Errorf("%s: %d %+v; want %d naming %q", c.body, code, e, c.status, c.param)
		}
	}
	// A response made in the foreground cannot be cancelled.
	var fg bgResponse
	if code := post(t, f, "/v1/responses", `{"model":"massgen/team","input":"q"}`, &fg); code != 200 {
		t.Fatalf("foreground: %d", code)
	}
	var e struct{ Error struct{ Message string } }
	if code := post(t, f, "/v1/responses/"+fg.ID+"/cancel", ``, &e); code != 400 || !strings.Contains(e.Error.Message, "background") {
		t.Errorf("cancelling a foreground response: %d %+v; want 400 saying only background ones can be", code, e)
	}
	if code := post(t, f, "/v1/responses/resp_0000/cancel", ``, &e); code != 404 {
		t.Errorf("cancelling an unknown response: %d", code)
	}
}

// POST /v1/responses/{id}/cancel stops the run at once (its model
// requests are cancelled) and the Response says cancelled, for good.
func TestCancellingABackgroundResponseStopsItsRun(t *testing.T) {
	sim, url := simtest.Start(t, "models:\n  m-slow: {ttft_ms: 60000}\n")
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := openDB(t, path)
	f := start(t, setup{configs: map[string]string{"team.yaml": team(url, "m-slow")}, deps: server.Deps{Responses: db}})
	var r bgResponse
	if code := post(t, f, "/v1/responses", `{"model":"massgen/team","input":"q","background":true}`, &r); code != 200 {
		t.Fatalf("POST: %d", code)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := sim.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) > 0 }); err != nil {
		t.Fatal(err)
	}
	var got bgResponse
	if code := post(t, f, "/v1/responses/"+r.ID+"/cancel", ``, &got); code != 200 || got.Status != "cancelled" {
		t.Fatalf("cancel: %d %+v; want the Response cancelled", code, got)
	}
	if err := sim.WaitFor(ctx, func(rs []llmsim.Record) bool {
		for _, rec := range rs {
			if rec.Outcome == "" {
				return false // still streaming
			}
		}
		return true
	}); err != nil {
		t.Errorf("the model request was not cancelled: %v", err)
	}
	if runs, err := db.BackgroundRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("the cancelled run is still recorded in flight: %+v, %v", runs, err)
	}
	if again := pollUntil(t, f, r.ID, "cancelled", "completed", "failed"); again.Status != "cancelled" {
		t.Errorf("GET after cancel: %+v", again)
	}
}

// A server stopped while a background response runs pauses it, recorded
// with its log; the next server carries it on from that log: the agents
// that had answered are not asked again, and the client's poll ends with
// the completed Response under the same id.
func TestABackgroundResponseOutlivesARestartOfTheServer(t *testing.T) {
	sim, url := simtest.Start(t, "models:\n  m-slow: {ttft_ms: 60000}\n")
	path := filepath.Join(t.TempDir(), "sessions.db")
	configs := map[string]string{"team.yaml": team(url, "m-quick", "m-other", "m-slow")}
	first := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	var r bgResponse
	if code := post(t, first, "/v1/responses", `{"model":"massgen/team","input":"What is 2+2?","background":true}`, &r); code != 200 {
		t.Fatalf("POST: %d", code)
	}
	// Wait until the run's log holds the two quick answers.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db := openDB(t, path)
	var logDir string
	for len(logDir) == 0 || !holdsAnswers(logDir, 2) {
		runs, err := db.BackgroundRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && len(runs[0].LogDirs) == 1 {
			logDir = runs[0].LogDirs[0]
		}
		if ctx.Err() != nil {
			t.Fatalf("the run never logged two answers (log %q)", logDir)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := first.srv.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown waits for the run instead of pausing it: %v", err)
	}
	if runs, err := db.BackgroundRuns(ctx); err != nil || len(runs) != 1 || runs[0].ID != strings.TrimPrefix(r.ID, "resp_") {
		t.Fatalf("after the stop the run is not recorded in flight: %+v, %v", runs, err)
	}

	// The next server: the slow model is replaced, so the run can end.
	before := len(sim.Requests())
	configs["team.yaml"] = team(url, "m-quick", "m-other", "m-third")
	second := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	if n, err := second.srv.ResumeBackground(ctx); err != nil || n != 1 {
		t.Fatalf("ResumeBackground = %d, %v; want the 1 run", n, err)
	}
	done := pollUntil(t, second, r.ID, "completed", "failed", "cancelled")
	if done.Status != "completed" || done.text() == "" {
		t.Fatalf("after the restart: %+v; want the run completed", done)
	}
	for _, rec := range sim.Requests()[before:] {
		if (rec.Model == "m-quick" || rec.Model == "m-other") && rec.Step == "answer" {
			t.Errorf("%s was asked for its answer again after the restart (request %d)", rec.Model, rec.ID)
		}
	}
	// The run's record goes once it has finished, a moment after the
	// response reads completed.
	runs, err := db.BackgroundRuns(ctx)
	for deadline := time.Now().Add(5 * time.Second); err == nil && len(runs) != 0 && time.Now().Before(deadline); runs, err = db.BackgroundRuns(ctx) {
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || len(runs) != 0 {
		t.Errorf("the finished run is still recorded in flight: %+v, %v", runs, err)
	}
}

// holdsAnswers reports whether the replay log in dir holds n answers.
func holdsAnswers(dir string, n int) bool {
	if _, err := os.Stat(filepath.Join(dir, runlog.ReplayName)); err != nil {
		return false
	}
	seeds, _, err := runlog.Carried(dir)
	return err == nil && len(seeds) >= n
}
