package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
)

// A hung provider shows in status.json before the idle-stream timeout fails
// the turn (issue 8 §2): the agent is "stalled", with the seconds since its
// request's last byte. Before, status.json kept it "working" (or, by
// events alone, stalled only after a fixed 30 s, whatever the timeout). The
// threshold is half the idle timeout: 4 s here, so status.json (rewritten
// every 2 s) says it at least twice before the turn is cut at 8 s.
func TestAHungProviderShowsAsStalledInStatusJSON(t *testing.T) {
	dir := t.TempDir()
	env := simDir(t, dir, map[string]string{
		"c.yaml": `agents:
  - {id: hung, backend: {type: sim, model: sim-hung, scenario: s.yaml}}
  - {id: fine, backend: {type: sim, model: sim-fine, scenario: s.yaml}}
timeout_settings: {stream_idle_timeout_seconds: 8}
ui: {logging_enabled: true}
`,
		// Mid-stream: some text, then not a byte more.
		"s.yaml": "models:\n  sim-hung:\n    steps:\n      - {fault: hang, text: \"Let me think about\"}\n",
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logDir := make(chan string, 1)
	done := make(chan *Outcome, 1)
	go func() {
		out, err := Execute(ctx, env, Request{
			Question: "q",
			Team:     Team{Config: "c.yaml"},
			Logging:  Logging{LogDir: filepath.Join(dir, "logs")},
			Observer: Observer{Observe: func(sub *event.Subscription, info RunInfo) {
				logDir <- info.LogDir
				for ok := true; ok; _, ok = sub.Next(nil) {
				}
			}},
		})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	status := filepath.Join(<-logDir, "status.json")
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	var seen runlog.AgentView
	// Bounded by the run: the idle timeout ends the hung turn, and the
	// team then finishes.
	for seen.Status != "stalled" {
		select {
		case out := <-done:
			t.Fatalf("the run ended (%s) and status.json never showed the hung agent stalled", out.Status)
		case <-poll.C:
		}
		data, err := os.ReadFile(status)
		if err != nil {
			t.Fatal(err)
		}
		var st runlog.StatusView
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		seen = st.Agents["hung"]
		if f := st.Agents["fine"]; f.Status == "stalled" {
			t.Fatalf("the healthy agent shows as stalled: %+v", f)
		}
	}
	if seen.SecondsSinceLastByte < 4 || seen.StalledSeconds != seen.SecondsSinceLastByte || seen.Failures != 0 {
		t.Errorf("hung = %+v; want stalled for at least 4 s since its last byte, no failure yet", seen)
	}
	cancel()
	if out := <-done; out.Status != "interrupted" {
		t.Errorf("status %s after cancelling", out.Status)
	}
}
