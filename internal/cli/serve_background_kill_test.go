package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/store"
)

// massgen serve killed with SIGKILL while a background response runs:
// started again in the same directory, it carries the response on from
// its log — the agents that had answered are not asked again — and the
// client polling GET /v1/responses/{id} gets the completed Response under
// the id it was first given.
func TestServeKilledMidBackgroundResponseCarriesItOnAfterARestart(t *testing.T) {
	bin := buildMassgen(t)
	dir := t.TempDir()
	srv, url := simtest.Start(t, "models:\n  m-slow: {ttft_ms: 60000}\n")
	cfgDir := filepath.Join(dir, "configs")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTeam := func(third string) {
		var b strings.Builder
		b.WriteString("agents:\n")
		for _, a := range [][2]string{{"quick", "m-quick"}, {"other", "m-other"}, {"third", third}} {
			fmt.Fprintf(&b, "  - {id: %s, backend: {type: chatcompletion, model: %s, base_url: %q}}\n", a[0], a[1], url)
		}
		if err := os.WriteFile(filepath.Join(cfgDir, "team.yaml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTeam("m-slow")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	hc := &http.Client{Timeout: 10 * time.Second}

	serve := func() (*exec.Cmd, string, *syncBuffer) {
		cmd := exec.CommandContext(ctx, bin, "serve", "--port", "0", "--config-dir", cfgDir)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		log := &syncBuffer{}
		addr := make(chan string, 1)
		go func() {
			re := regexp.MustCompile(`listening on (http://[0-9.:]+)`)
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				_, _ = log.Write([]byte(sc.Text() + "\n"))
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					addr <- m[1]
				}
			}
		}()
		select {
		case a := <-addr:
			return cmd, a, log
		case <-ctx.Done():
			t.Fatal("massgen serve did not start")
		}
		return nil, "", nil
	}

	first, base, _ := serve()
	resp, err := hc.Post(base+"/v1/responses", "application/json",
		strings.NewReader(`{"model":"massgen/team","input":"What is 2+2?","background":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var queued struct{ ID, Status string }
	_ = json.NewDecoder(resp.Body).Decode(&queued)
	resp.Body.Close()
	if resp.StatusCode != 200 || queued.Status != "queued" {
		t.Fatalf("POST: %d %+v", resp.StatusCode, queued)
	}

	// Kill the server once the run's log holds the two quick answers.
	st, err := store.Open(ctx, store.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for answered := false; !answered; time.Sleep(10 * time.Millisecond) {
		runs, err := st.BackgroundRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && len(runs[0].LogDirs) > 0 {
			seeds, _, err := runlog.Carried(runs[0].LogDirs[0])
			answered = err == nil && len(seeds) >= 2
		}
		if ctx.Err() != nil {
			t.Fatal("the run never logged two answers")
		}
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	before := len(srv.Requests())
	writeTeam("m-third")
	_, base, log := serve()
	var done struct {
		Status string
		Output []struct {
			Type    string
			Content []struct{ Text string }
		}
	}
	for done.Status != "completed" {
		if ctx.Err() != nil {
			t.Fatalf("the resumed response is still %q; serve said:\n%s", done.Status, log.String())
		}
		time.Sleep(20 * time.Millisecond)
		r, err := hc.Get(base + "/v1/responses/" + queued.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("GET after the restart: %d %s", r.StatusCode, b)
		}
		if err := json.Unmarshal(b, &done); err != nil {
			t.Fatal(err)
		}
		if done.Status == "failed" || done.Status == "cancelled" {
			t.Fatalf("the resumed response ended %s: %s", done.Status, b)
		}
	}
	if len(done.Output) == 0 {
		t.Errorf("the completed Response has no output")
	}
	for _, r := range srv.Requests()[before:] {
		if (r.Model == "m-quick" || r.Model == "m-other") && r.Step == "answer" {
			t.Errorf("%s was asked for its answer again after the restart (request %d)", r.Model, r.ID)
		}
	}
	if runs, err := st.BackgroundRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("the finished run is still recorded in flight: %+v, %v", runs, err)
	}
}
