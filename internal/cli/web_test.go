package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// massgen --web listens on 127.0.0.1, prints an address whose fragment
// carries a token made for this launch, offers the examples and the
// --config given (preselected), answers the API only with that token, and
// stops on Ctrl+C (its context) with exit code 0.
func TestWebServesTheUIBehindALaunchToken(t *testing.T) {
	dir := t.TempDir()
	stderr := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"--web", "--no-browser", "--web-port", "0", "--config", "@examples/sim_three_agents"},
			Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, WorkDir: dir})
	}()
	re := regexp.MustCompile(`massgen web UI: (http://127\.0\.0\.1:\d+/ui/)#token=([0-9a-f]{48})\n`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(5 * time.Millisecond) {
		if m = re.FindStringSubmatch(stderr.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("no address printed:\n%s", stderr.String())
		}
	}
	base, token := m[1], m[2]
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(path, tok string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if c, _ := get("", ""); c != http.StatusOK {
		t.Fatalf("the page: %d", c)
	}
	if c, _ := get("api/info", ""); c != http.StatusUnauthorized {
		t.Fatalf("the API without the token: %d", c)
	}
	c, info := get("api/info", token)
	if c != http.StatusOK || info["default_config"] != "@examples/sim_three_agents" {
		t.Fatalf("info: %d %v", c, info)
	}
	names := ""
	for _, cfg := range info["configs"].([]any) {
		names += cfg.(map[string]any)["name"].(string) + " "
	}
	if !strings.Contains(names, "@examples/sim_latency ") {
		t.Fatalf("configs offered: %s", names)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d:\n%s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("massgen --web did not stop")
	}
}

// Under massgen serve, the page lists a run an API client started and
// follows its events live (it cannot cancel it: its client owns it), with
// the server's API key.
func TestServeUIFollowsAPIClientsRuns(t *testing.T) {
	dir := t.TempDir()
	team := `agents:
  - id: slowpoke
    backend:
      type: sim
      model: sim-slowpoke
      ttft_ms: 5
      tokens_per_second: 40
      scenario:
        models:
          sim-slowpoke:
            steps:
              - text: "Thinking slowly enough for a page to watch this run while it streams its thoughts."
                answer: "Forty-two."
`
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(team), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeIn(t, dir, nil, "--config", filepath.Join(dir, "team.yaml"), "--api-key", "k3y")
	done := make(chan int, 1)
	go func() {
		code, _ := p.post(t, "k3y", `{"model":"massgen","messages":[{"role":"user","content":"The API client's question"}]}`)
		done <- code
	}()
	ui := func(path string, out any) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.url+"/ui/api/"+path, nil)
		req.Header.Set("Authorization", "Bearer k3y")
		resp, err := p.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(out)
		return resp.StatusCode
	}
	// The run appears once the server has registered it (bounded wait).
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; time.Sleep(10 * time.Millisecond) {
		var list struct {
			Runs []struct {
				ID, Question string
				Live         bool
				Cancellable  bool
			}
		}
		ui("runs", &list)
		for _, r := range list.Runs {
			if strings.HasPrefix(r.ID, "api:") && r.Question == "The API client's question" {
				if !r.Live || r.Cancellable {
					t.Fatalf("an API run: %+v", r)
				}
				id = r.ID
			}
		}
		if id == "" && time.Now().After(deadline) {
			t.Fatalf("the API client's run is not listed: %+v", list)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.url+"/ui/api/events?run="+id, nil)
	req.Header.Set("Authorization", "Bearer k3y")
	resp, err := p.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"event: run_started", "event: text_delta", "event: new_answer", "event: run_finished", "event: end"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page's stream of the API run has no %q:\n%.2000s", want, body)
		}
	}
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the API client got %d", code)
	}
	// Without the key, nothing.
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, p.url+"/ui/api/events?run="+id, nil)
	resp, err = p.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the key: %d", resp.StatusCode)
	}
}
