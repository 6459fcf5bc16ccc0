package cli

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// warnedConfig is a simulated team whose config has a key massgen
// accepts and ignores: resolving it raises a warning in app, before the
// run starts.
const warnedConfig = `agents:
  - id: a
    backend:
      type: sim
      model: sim-a
      upload_files: true
`

const warnedText = "agents[0].backend.upload_files: 'upload_files' is accepted but ignored: this version does not support file uploads yet"

func TestAWarningReachesStreamEventsAsItsFirstLine(t *testing.T) {
	for _, schema := range []string{"1", "2"} {
		t.Run("schema "+schema, func(t *testing.T) {
			r := massgen(t, t.Context(), map[string]string{"team.yaml": warnedConfig}, nil,
				"--stream-events", "--event-schema", schema, "--no-logs", "--config", "team.yaml", "What is 2+2?")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var first map[string]any
			if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &first); err != nil {
				t.Fatal(err)
			}
			where := filepath.Join(r.dir, "team.yaml") + ":6:7"
			if first["type"] != "warning" || first["text"] != warnedText || first["where"] != where {
				t.Errorf("first line %v, want the warning %q at %s", first, warnedText, where)
			}
			if n := strings.Count(r.stdout, `"type":"warning"`); n != 1 {
				t.Errorf("%d warning lines, want 1:\n%s", n, r.stdout)
			}
			// stderr holds the warnings under --stream-events, as before
			// they were events: once each, nothing else.
			if want := where + ": warning: " + warnedText + "\n"; r.stderr != want {
				t.Errorf("stderr = %q, want %q", r.stderr, want)
			}
		})
	}
}

func TestPlainProgressPrintsAWarningOnceBeforeTheRun(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{"team.yaml": warnedConfig}, nil,
		"--display", "plain", "--config", "team.yaml", "What is 2+2?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(r.stderr, "\n")
	want := filepath.Join(r.dir, "team.yaml") + ":6:7: warning: " + warnedText
	if lines[0] != want || !strings.HasPrefix(lines[1], "logs: ") || !strings.HasPrefix(lines[2], "massgen: run started") {
		t.Errorf("stderr starts\n%s\nwant the warning, the logs line, then the run:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"), want)
	}
	if n := strings.Count(r.stderr, "warning: "); n != 1 {
		t.Errorf("%d warnings on stderr, want 1:\n%s", n, r.stderr)
	}
	// The logs keep it with the run's other events, before run_started.
	data, err := os.ReadFile(filepath.Join(r.logDir(t), "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["type"] != "warning" || rec["text"] != warnedText || rec["seq"] != float64(1) {
		t.Errorf("first logged event %v, want the warning", rec)
	}
}

func TestAWarningReachesServesEventStream(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(cfg, []byte(warnedConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeIn(t, dir, nil, "--config", cfg)
	var ids []string
	for range 2 { // the second run comes from the team cache
		req, _ := http.NewRequest("POST", p.url+"/v1/chat/completions",
			strings.NewReader(`{"model":"massgen","messages":[{"role":"user","content":"What is 2+2?"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("X-Massgen-Run-Id"))
	}
	for _, id := range ids {
		resp, err := p.hc.Get(p.url + "/v1/runs/" + id + "/events?from=1")
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		var warning map[string]any
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		typ := ""
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				typ = v
				continue
			}
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if typ == "end" {
				break
			}
			types = append(types, typ)
			if typ == "warning" {
				if err := json.Unmarshal([]byte(data), &warning); err != nil {
					t.Fatalf("%v: %s", err, data)
				}
			}
		}
		resp.Body.Close()
		if len(types) < 2 || types[0] != "warning" || types[1] != "run_started" {
			t.Errorf("run %s: events %v, want the warning first, then run_started", id, types)
		}
		if warning == nil || warning["text"] != warnedText || warning["where"] != cfg+":6:7" || warning["v"] != float64(2) {
			t.Errorf("run %s: warning %v", id, warning)
		}
	}
	// The operator reads it once on the server's stderr, not once a run.
	if n := strings.Count(p.stderr.String(), "warning: "+warnedText); n != 1 {
		t.Errorf("the warning is on serve's stderr %d times, want 1:\n%s", n, p.stderr.String())
	}
}
